"""Context recall: do the gold facts reach the retrieved passages and the exact prompt the model sees?"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from pipeline.evaluation.dataset import SystemItem
from pipeline.evaluation.mentions import find_values, values_equal
from pipeline.evaluation.metrics import by_field
from pipeline.evaluation.scoring import contains_text


def states(text: str, gold_object: str) -> bool:
    """Does ``text`` state the gold object: an equal normalised value (EN or ZH form), or, for an object
    without a value, the same words?"""
    wanted = find_values(gold_object)
    if wanted:
        return any(values_equal(v, w) for v in find_values(text) for w in wanted)
    return contains_text(text, gold_object)


@dataclass
class ContextProcessor:
    """One record per item: for every gold fact that its support documents state (computed facts, whose
    values no document states, are listed but not counted), whether the retrieved passages and the final
    prompt state it; and which support documents are among the prompt's sources."""
    prepare: Callable[[str], Any]          # question -> pipeline.loop.answerer.Prepared
    support: dict[str, str]                # doc id -> text

    def __call__(self, item: SystemItem) -> dict:
        t0 = time.perf_counter()
        prep = self.prepare(item.question)
        latency = (time.perf_counter() - t0) * 1000
        retrieved_text = "\n".join(p.text for p in prep.retrieved)
        prompt_text = "\n".join(p.text for p in prep.prompt.passages)
        support_text = "\n".join(self.support[d] for d in item.support)
        facts = []
        for g in item.gold_facts:
            obj = str(g.object)   # text already (the dataset validator); str() says so to mypy
            groundable = states(support_text, obj)
            facts.append({"relation": g.relation, "subject": g.subject, "object": g.object,
                          "groundable": groundable,
                          "retrieved": groundable and states(retrieved_text, obj),
                          "in_prompt": groundable and states(prompt_text, obj)})
        sources = [p.doc_id for p in prep.prompt.passages]
        return {"id": item.id, "kind": item.kind, "language": item.language, "question": item.question,
                "facts": facts, "support": item.support,
                "support_in_prompt": [d for d in item.support if d in sources],
                "support_retrieved": [d for d in item.support if d in {p.doc_id for p in prep.retrieved}],
                "prompt_sources": [f"{p.doc_id}[{p.start}:{p.end}]" for p in prep.prompt.passages],
                "prompt_tokens": prep.prompt.prompt_tokens, "latency_ms": latency}


def _share(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, 4)


def context_group(records: list[dict]) -> dict:
    facts = [f for r in records for f in r["facts"] if f["groundable"]]
    support = [d for r in records for d in r["support"]]
    complete = [r for r in records if any(f["groundable"] for f in r["facts"])]
    return {
        "n": len(records),
        "gold_facts": len(facts),
        "computed_facts": sum(not f["groundable"] for r in records for f in r["facts"]),
        "retrieval_recall": _share(sum(f["retrieved"] for f in facts), len(facts)),
        "context_recall": _share(sum(f["in_prompt"] for f in facts), len(facts)),
        "support_recall": _share(sum(len(r["support_in_prompt"]) for r in records), len(support)),
        "support_retrieved": _share(sum(len(r["support_retrieved"]) for r in records), len(support)),
        # questions whose every stated gold fact reaches the prompt: the ones a generator could answer
        "items_complete_in_prompt": _share(sum(all(f["in_prompt"] for f in r["facts"] if f["groundable"])
                                               for r in complete), len(complete)),
        "mean_prompt_tokens": _share(sum(r["prompt_tokens"] for r in records), len(records)),
    }


def context_summary(records: list[dict]) -> dict:
    out: dict = {"kind": "context", "n": len(records), **context_group(records)}
    for field in ("kind", "language"):
        out[f"by_{field}"] = by_field(records, field, context_group)
    return out
