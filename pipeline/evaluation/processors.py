"""Turn one dataset item into one results.jsonl record: a pipeline answer scored, or a detector verdict."""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any, Callable

from pipeline.evaluation.dataset import DatasetError, DetectorItem, SystemItem
from pipeline.evaluation.detector import DetectorConfig, detect
from pipeline.evaluation.scoring import FactReader, is_abstention, score_answer

DELIVERED_STATUSES = ("verified",)   # "with verifier": only answers returned as verified reach the user
PASSED_STATUSES = ("verified", "regenerated")  # also counts answers verified after a regeneration
FRONT_MATTER = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.S)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def _plain(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return obj


def read_support(kb_dir: str | Path, items: list[SystemItem]) -> dict[str, str]:
    """Text of every document the dataset cites as support (front matter removed); fails up front on a
    doc id missing from the KB, since every later score would silently be wrong."""
    kb = Path(kb_dir)
    texts: dict[str, str] = {}
    for item in items:
        for doc in item.support:
            if doc in texts:
                continue
            p = kb / doc
            if not p.is_file():
                raise DatasetError(f"item {item.id!r}: support document {doc!r} is not in the KB {kb}")
            texts[doc] = FRONT_MATTER.sub("", p.read_text(encoding="utf-8"), count=1)
    return texts


@dataclass
class SystemProcessor:
    """Asks the pipeline once per question (regenerate policy) and scores both views of the result:
    plain RAG = the first attempt's raw answer, status ignored; verified = the final answer, delivered
    only with status 'verified'; passed = the same, delivered with status verified or regenerated."""
    ask: Callable[[str], Any]                   # question -> AnswerResult(-like)
    support: dict[str, str]
    read_facts: FactReader | None = None

    def __call__(self, item: SystemItem) -> dict:
        t0 = time.perf_counter()
        result = self.ask(item.question)
        latency = (time.perf_counter() - t0) * 1000
        answer, status = _get(result, "answer", ""), _get(result, "status", "")
        attempts = _get(result, "attempts") or []
        first = attempts[0] if attempts else None
        plain_answer = _get(first, "answer", answer) if first is not None else answer
        plain_abstained = bool(_get(first, "abstained", False)) or is_abstention(plain_answer)
        support = [self.support[d] for d in item.support]
        plain = score_answer(item, plain_answer, abstained=plain_abstained, support_texts=support,
                             read_facts=self.read_facts).to_dict()
        plain["delivered"] = not plain_abstained
        final_abstained = status == "abstained" or is_abstention(answer)
        verified = score_answer(item, answer, abstained=final_abstained, support_texts=support,
                                read_facts=self.read_facts).to_dict()
        verified["delivered"] = status in DELIVERED_STATUSES and not final_abstained
        passed = dict(verified, delivered=status in PASSED_STATUSES and not final_abstained)
        claims = [_plain(c) for c in (_get(result, "claims") or [])]
        return {
            "id": item.id, "kind": item.kind, "language": item.language, "question": item.question,
            "answer": answer, "status": status, "plain_answer": plain_answer,
            "attempts": len(attempts), "claims": claims,
            "verdicts": [_get(c, "verdict") for c in claims],
            "reason": _get(result, "reason", ""),
            "timings_ms": _get(result, "timings_ms", {}), "usage": _get(result, "usage", {}),
            "latency_ms": latency, "plain": plain, "verified": verified, "passed": passed,
        }


@dataclass
class DetectorProcessor:
    cfg: DetectorConfig
    verify: Callable | None = None     # the symbolic.Verifier bridge, when available

    def __call__(self, item: DetectorItem) -> dict:
        t0 = time.perf_counter()
        d = detect(item.context, item.question, item.answer, self.cfg, self.verify)
        predicted = "hallucinated" if d.hallucinated else "faithful"
        bad = [c.text for c in d.claims if not c.supported]
        # span localisation: annotated wrong keywords that some unsupported claim overlaps
        span_hits = None if not item.span else sum(any(k in t or t in k for t in bad) for k in item.span)
        return {
            "id": item.id, "language": item.language, "source": item.source, "question": item.question,
            "answer": item.answer, "label": item.label, "predicted": predicted,
            "correct": predicted == item.label, "score": d.score, "novelty": d.novelty,
            "claims": [asdict(c) for c in d.claims],
            "verdicts": [c.verdict or ("supported" if c.supported else "unsupported") for c in d.claims],
            "reason": d.reason, "latency_ms": (time.perf_counter() - t0) * 1000,
            "span": item.span or None, "span_hits": span_hits,
        }
