"""The answer-quality table of bench/RESULTS.md from system-run folders (verirag eval ... --out RUN).

Usage: .venv/bin/python bench/eval_table.py RUN [RUN ...] [--rules DIR --dataset FILE]

Per run and view (plain RAG = the first draft, status ignored; verified = delivered only with status
verified): coverage, hallucination among delivered answers, accuracy on factual items (answerable, numeric,
superseded: the gold values stated by a delivered answer), correct abstention on unanswerable items, false
abstention on answerable ones, and -- with --rules -- accuracy on the factual items the rules cover (the
question parses into a rule-base relation, pipeline.question.focus). Scores come from the run's records (gold
annotations only); nothing is re-run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FACTUAL = ("answerable", "numeric", "superseded")


def _rate(num: int, den: int) -> str:
    return f"{num}/{den} = {num / den:.1%}" if den else "–"


def covered_ids(dataset: Path, rules: Path) -> set[str]:
    from pipeline.question.focus import parse_question
    from symbolic import load_rulebase
    rb = load_rulebase(rules)
    ids = set()
    for line in dataset.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["kind"] in FACTUAL and parse_question(item["question"], rb).goals:
            ids.add(item["id"])
    return ids


def rows(run: Path, covered: set[str] | None) -> list[str]:
    recs = [json.loads(x) for x in (run / "results.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    out = []
    for view in ("plain", "verified"):
        delivered = [r for r in recs if r[view]["delivered"]]
        halluc = sum(r[view]["hallucinated"] for r in delivered)
        factual = [r for r in recs if r["kind"] in FACTUAL]
        right = sum(bool(r[view]["correct"]) and r[view]["delivered"] for r in factual)
        unans = [r for r in recs if r["kind"] == "unanswerable"]
        answerable = [r for r in recs if r["kind"] == "answerable"]
        cov = "–"
        if covered is not None:
            c = [r for r in factual if r["id"] in covered]
            cov = _rate(sum(bool(r[view]["correct"]) and r[view]["delivered"] for r in c), len(c))
        out.append(f"| {run.name} | {view} | {_rate(len(delivered), len(recs))} | {_rate(halluc, len(delivered))} "
                   f"| {_rate(right, len(factual))} | {cov} | {_rate(sum(r[view]['abstained'] for r in unans), len(unans))} "
                   f"| {_rate(sum(r[view]['abstained'] for r in answerable), len(answerable))} |")
    lat = [r["latency_ms"] / 1000 for r in recs]
    q = statistics.quantiles(lat, n=10)
    out.append(f"| {run.name} | latency | p50 {statistics.median(lat):.1f} s, p90 {q[-1]:.1f} s, "
               f"statuses {json.dumps(_statuses(recs))} | | | | | |")
    return out


def _statuses(recs: list[dict]) -> dict:
    counts: dict[str, int] = {}
    for r in recs:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--rules", default=None, help="rule folder: also report accuracy on the items it covers")
    ap.add_argument("--dataset", default=None, help="the run's dataset (with --rules)")
    args = ap.parse_args()
    covered = covered_ids(Path(args.dataset), Path(args.rules)) if args.rules and args.dataset else None
    print("| run | view | delivered (coverage) | hallucinated among delivered | factual accuracy "
          "| factual accuracy, items the rules cover | correct abstention (unanswerable) | false abstention (answerable) |")
    print("|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        for row in rows(Path(run), covered):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
