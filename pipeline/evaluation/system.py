"""Build the real pipeline for a system run: engine + retriever over the KB + rule base -> ask(question)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pipeline.evaluation.scoring import FactReader


@dataclass
class SystemSetup:
    ask: Callable[[str], Any]
    read_facts: FactReader | None
    describe: dict


def build_system(kb_dir: str | Path, rules_dir: str | Path, model: str | None, *, index_dir: str | Path | None,
                 seed: int | None, max_tokens: int = 256, max_attempts: int = 3) -> SystemSetup:
    """One Answerer with the regenerate policy; every question is asked once and both the first
    attempt (plain RAG) and the final answer are scored from that one result."""
    from neural import Engine, EngineConfig
    from pipeline import Answerer, AskOptions
    from retrieval import Retriever, ingest
    from symbolic import RuleBaseHolder
    from retrieval.ingest import default_index_dir

    index = Path(index_dir) if index_dir else default_index_dir(kb_dir)
    ingest(kb_dir, index)                        # incremental: a no-op when the index is current
    retriever = Retriever.open(index)
    holder = RuleBaseHolder(rules_dir)
    engine = Engine(EngineConfig(model=model))
    answerer = Answerer(engine, retriever, holder)
    options = AskOptions(policy="regenerate", max_attempts=max_attempts, max_tokens=max_tokens,
                         temperature=0.0, seed=seed)
    rb = holder.current

    def read_facts(text: str) -> list[tuple[str, tuple]]:
        from symbolic import Provenance
        return [(f.relation, f.args) for f, _, _ in rb.extract(text, source=Provenance("answer"))]

    return SystemSetup(ask=lambda q: answerer.ask(q, options), read_facts=read_facts,
                       describe={"model": model or "default (SmolLM2-135M-Instruct Q4_1)",
                                 "kb": str(Path(kb_dir).resolve()), "rules": str(Path(rules_dir).resolve()),
                                 "policy": "regenerate", "max_attempts": max_attempts,
                                 "max_tokens": max_tokens, "temperature": 0.0})
