"""What the pipeline reads of the things it is given: a passage (retrieval.records.Passage, a caller's given
passage, a test's fake), a retriever that finds passages, and a model that generates. Protocols, so every
stage can name them in its signatures; this module imports nothing from the stages."""
from __future__ import annotations

from typing import Any, Iterator, Protocol


class PassageLike(Protocol):
    """What the pipeline reads of a passage directly. Attributes a passage may lack (``title``,
    ``heading_path``, ``context_prefix``, ``authority``, ``effective_date``, ``score``, ...) are read with
    ``getattr`` and a default, and are not part of it."""
    @property
    def doc_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class RetrieverLike(Protocol):
    def search(self, query: str, top_k: int = 5, **filters: Any) -> list[PassageLike]: ...


class Generator(Protocol):
    """What the answer loop needs of a model: neural.Engine and api's EngineClient both fit (read-only: the
    client's are properties; an unknown context length falls back to DEFAULT_CONTEXT_LEN)."""
    @property
    def tokenizer(self) -> Any: ...
    @property
    def max_model_len(self) -> int | None: ...

    def chat(self, messages: list[dict], sampling: Any = None) -> Any: ...
    def stream(self, prompt: str | list[dict], sampling: Any = None) -> Iterator[Any]: ...
