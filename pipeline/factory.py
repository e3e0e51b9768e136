"""default_answerer(): engine + retriever (ingesting the KB when its index is missing or stale) + rules."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pipeline.answerer import Answerer, AnswererConfig
from pipeline.defaults import (
    DEFAULT_KB_DIR,
    DEFAULT_RULES_DIR,
    DEFAULT_SPECULATIVE_TOKENS,
    MAX_SPECULATIVE_TOKENS,
    default_index_dir,
)

log = logging.getLogger(__name__)


def open_retriever(kb_dir: str | Path, index_dir: str | Path | None = None) -> Any:
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


def open_rules(rules_dir: str | Path) -> Any:
    """A hot-reloadable holder of the rule base in ``rules_dir`` (RuleError if the files are invalid)."""
    from symbolic import RuleBaseHolder
    path = Path(rules_dir)
    if not path.exists():
        raise FileNotFoundError(f"rules folder not found: {path}")
    return RuleBaseHolder(path)


def default_answerer(kb_dir: str | Path | None = None, rules_dir: str | Path | None = None,
                     model: str | None = None, index_dir: str | Path | None = None, *,
                     engine: Any = None, config: AnswererConfig | None = None,
                     speculative_tokens: int = DEFAULT_SPECULATIVE_TOKENS, quantization: str | None = "auto") -> Answerer:
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
