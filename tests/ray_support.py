"""Test support for Ray Serve replicas: a small domain on disk and the components each replica loads.

Replicas load the fake engine and answerer of api_support (fast, no model) over the real index (hashing
embedder: no model either) and the real rule holder, so index and rule reloads go through the code
production runs. A file named ``cannot-load`` next to the KB makes every replica started from then on fail
to load, as a replica whose machine lost the model file would.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

GOOD_RULES = 'relation p(text)\nrule F1 "first": if p(?x) then violation "x"\n'
POISON = "cannot-load"


def make_domain(root: Path) -> dict[str, Path]:
    """KB (one document), its index (hashing embedder) and a one-rule rule folder under root."""
    from retrieval import ingest

    kb, index, rules = root / "kb", root / "index", root / "rules"
    kb.mkdir(parents=True)
    rules.mkdir()
    (kb / "leave.md").write_text("Full-time employees get 30 days of annual leave.\n", encoding="utf-8")
    (rules / "a.rules").write_text(GOOD_RULES, encoding="utf-8")
    ingest(kb, index, embedder="hashing")
    return {"kb": kb, "index": index, "rules": rules}


def in_flight_dir(settings_or_root: Any) -> Path:
    """Where replicas note the questions they are answering: <root>/in-flight/<pid>/<question>."""
    root = settings_or_root if isinstance(settings_or_root, Path) else Path(settings_or_root.kb_dir).parent
    return root / "in-flight"


def _tracing(answerer_cls: type, notes: Path) -> Any:
    class TracingAnswerer(answerer_cls):  # type: ignore[misc, valid-type]
        """Notes each question while it is being answered, so a test knows what is in flight on which process."""

        def ask(self, question: str, options: Any) -> Any:
            note = notes / str(os.getpid()) / question
            note.parent.mkdir(parents=True, exist_ok=True)
            note.touch()
            try:
                return super().ask(question, options)
            finally:
                note.unlink()

    return TracingAnswerer


def build(settings: Any) -> dict[str, Any]:
    """create_app's components for one replica (the `components` spec 'ray_support:build')."""
    if (Path(settings.kb_dir).parent / POISON).exists():
        raise RuntimeError(f"cannot load the model: {POISON} is set for this test")
    from api_support import FakeAnswerer, FakeEngine

    from neural.async_engine import AsyncEngine, EngineClient
    from retrieval import Retriever
    from symbolic import RuleBaseHolder
    ae = AsyncEngine(FakeEngine(num_blocks=1024, step_delay_s=0.01), max_pending=256)
    return {"async_engine": ae, "answerer": _tracing(FakeAnswerer, in_flight_dir(settings))(EngineClient(ae)),
            "retriever": Retriever.open(settings.resolved_index_dir),
            "rulebase_holder": RuleBaseHolder(settings.rules_dir)}
