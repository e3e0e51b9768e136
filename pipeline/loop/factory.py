"""default_answerer(): engine + retriever (ingesting the KB when its index is missing or stale) + rules."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from pipeline.defaults import (
    DEFAULT_KB_DIR,
    DEFAULT_RULES_DIR,
    DEFAULT_SPECULATIVE_TOKENS,
    MAX_SPECULATIVE_TOKENS,
    default_index_dir,
)
from pipeline.loop.answerer import Answerer
from pipeline.loop.config import AnswererConfig
from pipeline.loop.verify import VerifyResult
from pipeline.seams import Generator

if TYPE_CHECKING:
    from retrieval import Retriever
    from symbolic import RuleBaseHolder

log = logging.getLogger(__name__)


def open_retriever(kb_dir: str | Path, index_dir: str | Path | None = None) -> Retriever:
    """Open the KB's index, ingesting first when it is missing or the KB changed since the last ingest."""
    from retrieval import Retriever, index_status, ingest
    kb = Path(kb_dir)
    if not kb.is_dir():
        raise FileNotFoundError(f"knowledge base folder not found: {kb}")
    index = Path(index_dir) if index_dir is not None else default_index_dir(kb)
    state = index_status(kb, index)
    if state != "fresh":
        log.info("index %s is %s: ingesting %s", index, state, kb)
        ingest(kb, index)
    return Retriever.open(index)


def open_rules(rules_dir: str | Path) -> RuleBaseHolder:
    """A hot-reloadable holder of the rule base in ``rules_dir`` (RuleError if the files are invalid)."""
    from symbolic import RuleBaseHolder
    path = Path(rules_dir)
    if not path.exists():
        raise FileNotFoundError(f"rules folder not found: {path}")
    return RuleBaseHolder(path)


def default_answerer(kb_dir: str | Path | None = None, rules_dir: str | Path | None = None, model: str | None = None,
                     index_dir: str | Path | None = None, *, engine: Generator | None = None,
                     config: AnswererConfig | None = None, speculative_tokens: int = DEFAULT_SPECULATIVE_TOKENS,
                     quantization: str | None = "auto") -> Answerer:
    """The embedded default (repo kb/ + rules/ + the default model) unless paths are given.
    Pass ``engine`` to share an already-loaded engine (the server does); otherwise the engine built here
    speculates with prompt lookup, at most ``speculative_tokens`` per step (0: off), its weights quantized as
    ``quantization`` says (neural EngineConfig: auto = the model's registry default). A ``model`` of the form
    ``openai+http://HOST:PORT/v1`` generates on that OpenAI-compatible server (neural.remote)."""
    if (isinstance(speculative_tokens, bool) or not isinstance(speculative_tokens, int)
            or not 0 <= speculative_tokens <= MAX_SPECULATIVE_TOKENS):
        raise ValueError(f"speculative_tokens must be an integer in 0..{MAX_SPECULATIVE_TOKENS} (0 = off); "
                         f"got {speculative_tokens!r}")
    holder = open_rules(rules_dir or DEFAULT_RULES_DIR)        # cheapest to fail first
    retriever = open_retriever(kb_dir or DEFAULT_KB_DIR, index_dir)
    if engine is None and model is not None and model.startswith("openai+"):
        from neural.remote import RemoteConfig, RemoteGenerator
        engine = RemoteGenerator.connect(RemoteConfig.from_model(model))   # the server's one listed model
    if engine is None:
        from neural import Engine, EngineConfig
        from neural.spec_decode.config import SpeculativeConfig
        speculative = SpeculativeConfig(num_speculative_tokens=speculative_tokens) if speculative_tokens else None
        engine = Engine(EngineConfig(model=model, speculative=speculative, quantization=quantization))
    return Answerer(engine, retriever, holder, config)


def verify(question: str, answer: str, passages: Sequence[str] | None = None, *, kb: str | Path | None = None,
           rules: str | Path | None = None, answerer: Answerer | None = None, top_k: int = 5) -> VerifyResult:
    """Check ``answer`` (written by another model, or a person) to ``question`` against ``passages`` or the
    knowledge base folder ``kb`` (default: the embedded one) and the rules in ``rules`` (default: the embedded
    ones), claim by claim, with the verdicts /ask gives. No model is loaded: claims are read by the rule
    files' patterns and the question's focus (pass ``answerer`` to use its model, KB and rules)."""
    if passages is not None and kb is not None:
        raise ValueError("pass passages or kb, not both")
    if answerer is None:
        retriever = open_retriever(kb or DEFAULT_KB_DIR) if passages is None else None
        answerer = Answerer(None, retriever, open_rules(rules or DEFAULT_RULES_DIR),  # type: ignore[arg-type]
                            AnswererConfig(lm_extraction=False))
    return answerer.verify(question, answer, passages, top_k=top_k)
