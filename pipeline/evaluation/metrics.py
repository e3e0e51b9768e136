"""Aggregate per-item results into run metrics: system runs (plain vs verified) and detector runs."""
from __future__ import annotations

from collections import Counter, defaultdict
from functools import partial
from typing import Callable

# plain RAG (first attempt, status ignored) vs answers the verifier delivers (status verified; "passed"
# also counts answers verified after regeneration)
MODES = ("plain", "verified", "passed")


def _rate(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def by_field(records: list[dict], field: str, summarise: Callable[[list[dict]], dict]) -> dict[str, dict]:
    """``summarise`` applied to the records grouped by ``field`` (its value as text), groups in sorted order."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        groups[str(r.get(field))].append(r)
    return {k: summarise(v) for k, v in sorted(groups.items())}


def system_group(records: list[dict], mode: str) -> dict:
    """Metrics of one mode over a group of system-run records."""
    n = len(records)
    scores = [r[mode] for r in records]
    delivered = [s for s in scores if s["delivered"]]
    halluc = sum(s["hallucinated"] for s in delivered)
    with_gold = [s for s in scores if s["gold_total"] > 0]
    unans = [s for s in scores if s["correct_abstention"] is not None]
    reasons = Counter(x["type"] for s in delivered if s["hallucinated"] for x in s["reasons"])
    return {
        "n": n,
        "delivered": len(delivered),
        "coverage": _rate(len(delivered), n),
        "hallucinated": halluc,
        "hallucination_rate": _rate(halluc, len(delivered)),      # among delivered answers
        "hallucinations_per_question": _rate(halluc, n),
        "accuracy": _rate(sum(bool(s["correct"]) and s["delivered"] for s in with_gold), len(with_gold)),
        "abstention_rate": _rate(sum(s["abstained"] for s in scores), n),
        "correct_abstention": _rate(sum(bool(s["correct_abstention"]) for s in unans), len(unans)),
        "reasons": dict(reasons),
    }


def system_summary(records: list[dict]) -> dict:
    out: dict = {"kind": "system", "n": len(records)}
    for mode in [m for m in MODES if all(m in r for r in records)]:
        out[mode] = system_group(records, mode)
        for field in ("kind", "language"):
            out[mode][f"by_{field}"] = by_field(records, field, partial(system_group, mode=mode))
    out["status"] = dict(Counter(r["status"] for r in records))
    p, v = out["plain"]["hallucination_rate"], out["verified"]["hallucination_rate"]
    passed = out.get("passed", {}).get("hallucination_rate")
    out["headline"] = {
        "plain_hallucination_rate": p,
        "verified_hallucination_rate": v,
        "reduction_factor": (None if p is None or v is None else (float("inf") if v == 0 and p > 0 else
                             (None if v == 0 else p / v))),
        "verified_coverage": out["verified"]["coverage"],
        "target_met": None if p is None or v is None else v <= p / 2,
        "passed_hallucination_rate": passed,
        "passed_coverage": out.get("passed", {}).get("coverage"),
    }
    out["latency_ms"] = _latency([r.get("latency_ms") for r in records])
    return out


def confusion(records: list[dict]) -> dict:
    tp = sum(r["label"] == "hallucinated" and r["predicted"] == "hallucinated" for r in records)
    fp = sum(r["label"] == "faithful" and r["predicted"] == "hallucinated" for r in records)
    fn = sum(r["label"] == "hallucinated" and r["predicted"] == "faithful" for r in records)
    tn = sum(r["label"] == "faithful" and r["predicted"] == "faithful" for r in records)
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn}


def binary_metrics(c: dict) -> dict:
    """Precision, recall, F1 and balanced accuracy for the positive label 'hallucinated'."""
    tp, fp, fn, tn = c["tp"], c["fp"], c["fn"], c["tn"]
    precision, recall = _rate(tp, tp + fp), _rate(tp, tp + fn)
    specificity = _rate(tn, tn + fp)
    f1 = None if not precision or not recall else 2 * precision * recall / (precision + recall)
    if precision == 0 or recall == 0:
        f1 = 0.0
    ba = None if recall is None or specificity is None else (recall + specificity) / 2
    return {"precision": precision, "recall": recall, "f1": f1, "specificity": specificity,
            "balanced_accuracy": ba, "accuracy": _rate(tp + tn, tp + fp + fn + tn)}


def detector_summary(records: list[dict]) -> dict:
    c = confusion(records)
    out = {"kind": "detector", "n": len(records), "confusion": c, **binary_metrics(c)}
    by_lang: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_lang[str(r.get("language"))].append(r)
    out["by_language"] = {k: {"n": len(v), **binary_metrics(confusion(v))} for k, v in sorted(by_lang.items())}
    out["labels"] = dict(Counter(r["label"] for r in records))
    spans = [r for r in records if r.get("span")]
    if spans:   # share of annotated hallucinated keywords an unsupported claim points at
        out["span_recall"] = sum(r["span_hits"] for r in spans) / sum(len(r["span"]) for r in spans)
    out["latency_ms"] = _latency([r.get("latency_ms") for r in records])
    return out


def _latency(values: list[float | None]) -> dict:
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return {}
    pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    return {"mean": sum(xs) / len(xs), "p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": xs[-1]}
