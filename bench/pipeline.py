"""End-to-end /ask latency per stage (retrieve, prefill, decode, extract, verify) on the default domain.

Usage: .venv/bin/python bench/pipeline.py [--n 6] [--max-tokens 48] [--top-k 3] [--policy flag]
The baseline is generation itself (prefill + decode) measured in the same run: the verify stage's
share of total time is the figure to watch (target < 10 %).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STAGES = ("retrieve", "prefill", "decode", "extract", "verify")


def questions(n: int) -> list[dict]:
    rows = [json.loads(line) for line in (ROOT / "eval" / "default_domain.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    # a fixed, mixed set: take kinds round-robin in file order
    by_kind: dict[str, list[dict]] = {}
    for r in rows:
        by_kind.setdefault(r["kind"], []).append(r)
    out, i = [], 0
    while len(out) < n and any(by_kind.values()):
        kind = sorted(by_kind)[i % len(by_kind)]
        if by_kind[kind]:
            out.append(by_kind[kind].pop(0))
        i += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--policy", default="flag", choices=["flag", "abstain", "regenerate"])
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    from pipeline import AskOptions, default_answerer

    t = time.perf_counter()
    answerer = default_answerer()
    print(f"setup (engine + index + rules): {time.perf_counter() - t:.1f} s")
    opts = AskOptions(top_k=args.top_k, max_tokens=args.max_tokens, policy=args.policy)
    answerer.ask("warm-up: what is the AX-200?", AskOptions(top_k=1, max_tokens=4, policy="flag"))
    per_stage: dict[str, list[float]] = {s: [] for s in (*STAGES, "total")}
    statuses = []
    for q in questions(args.n):
        r = answerer.ask(q["question"], opts)
        statuses.append(f"{q['id']}:{r.status}")
        for s in per_stage:
            per_stage[s].append(r.timings_ms.get(s, 0.0))
    total = sum(per_stage["total"])
    gen = sum(per_stage["prefill"]) + sum(per_stage["decode"])
    print(f"{len(statuses)} questions, policy={args.policy}, max_tokens={args.max_tokens}, top_k={args.top_k}")
    print(f"{'stage':<10}{'mean ms':>12}{'p50 ms':>12}{'share':>9}{'vs generation':>15}")
    for s in (*STAGES, "total"):
        xs = per_stage[s]
        print(f"{s:<10}{statistics.mean(xs):>12.1f}{statistics.median(xs):>12.1f}"
              f"{100 * sum(xs) / total:>8.2f}%{sum(xs) / gen:>14.4f}x")
    verify_share = 100 * sum(per_stage["verify"]) / total
    print(f"verify share of total: {verify_share:.3f}% (target < 10%): {'OK' if verify_share < 10 else 'OVER'}")
    print("statuses:", " ".join(statuses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
