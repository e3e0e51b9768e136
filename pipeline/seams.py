"""What the pipeline reads of the things it is given: a passage (retrieval.records.Passage, a caller's given
passage, a test's fake), a retriever that finds passages, and a model that generates. Protocols, so every
stage can name them in its signatures; this module imports nothing from the stages."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Protocol, Sequence

if TYPE_CHECKING:
    from neural import RequestOutput, SamplingParams


class PassageLike(Protocol):
    """What the pipeline reads of a passage directly (``score``, ``superseded`` and ``quarantine`` with getattr in
    places too). Attributes a passage may lack (``title``, ``heading_path``, ``context_prefix``, ``authority``,
    ``effective_date``) are read only with ``getattr`` and a default, and are not part of it."""
    @property
    def doc_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def superseded(self) -> bool: ...
    @property
    def quarantine(self) -> str | None: ...


class RetrieverLike(Protocol):
    """What the pipeline asks of a retriever: the passages best for a query, best first (retrieval.Retriever's
    search; a retriever that takes neither filter is asked again without it, where the caller says so)."""
    def search(self, query: str, top_k: int = 5, *, include_quarantined: bool = False,
               doc_ids: Iterable[str] | None = None) -> Sequence[PassageLike]: ...


class TokenizerLike(Protocol):
    """What the pipeline asks of a model's tokenizer (neural.Tokenizer, the remote model's estimating one)."""
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]: ...
    def decode(self, ids: list[int]) -> str: ...
    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str: ...


class Generator(Protocol):
    """What the answer loop needs of a model: neural.Engine and api's EngineClient both fit (read-only: the
    client's are properties; an unknown context length falls back to DEFAULT_CONTEXT_LEN)."""
    @property
    def tokenizer(self) -> TokenizerLike: ...
    @property
    def max_model_len(self) -> int | None: ...

    def chat(self, messages: list[dict], sampling: SamplingParams | None = None) -> RequestOutput: ...
    def stream(self, prompt: str | list[dict], sampling: SamplingParams | None = None) -> Iterator[RequestOutput]: ...
