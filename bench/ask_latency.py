"""/ask end to end on each model, per stage (retrieve, prove, prefill, decode, extract, verify): p50/p90 over the
shipped eval questions, and the same with the proof answering first against the model drafting first.

    .venv/bin/python bench/ask_latency.py [--models default,qwen2.5-coder-0.5b] [--n 92] [--threads 2]
                                          [--dataset eval/default_domain.jsonl] [--kb kb] [--rules rules]

Each model's answerer is built once (engine, index, rules) and warmed up; then every question is asked twice,
draft first (AskOptions(proof_first=False), the loop before issue 50) and proof first (the default), alternating
which goes first so that load from other processes hits both alike, the prefix cache emptied before each ask (the
other mode's ask of the same question would leave its prompt cached). A question is "proof-answered" when the
proof-first answer needed no draft. The last line reads
``ask p50: <model> X.XX s (draft first Y.YY s), ...; proof-answered p50 Z.ZZ s``.
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

STAGES = ("retrieve", "prove", "prefill", "decode", "extract", "verify", "total")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def run_model(model: str, rows: list[dict], args: argparse.Namespace) -> dict:
    from pipeline import AskOptions, default_answerer

    t = time.perf_counter()
    answerer = default_answerer(args.kb, args.rules, None if model == "default" else model)
    setup_s = time.perf_counter() - t
    answerer.ask("warm-up: what is the AX-200?", AskOptions(top_k=1, max_tokens=4, policy="flag"))
    modes = {"draft first": AskOptions(proof_first=False), "proof first": AskOptions()}
    reset = getattr(answerer.generator, "reset_prefix_cache", lambda: None)
    stages: dict[str, dict[str, list[float]]] = {m: {s: [] for s in STAGES} for m in modes}
    proof_answered: list[float] = []
    statuses: dict[str, dict[str, int]] = {m: {} for m in modes}
    for i, row in enumerate(rows):
        order = list(modes) if i % 2 == 0 else list(modes)[::-1]
        for mode in order:
            reset()   # each ask cold: the other mode's ask of the same question would leave its prompt cached
            result = answerer.ask(row["question"], modes[mode])
            for s in STAGES:
                stages[mode][s].append(result.timings_ms.get(s, 0.0))
            statuses[mode][result.status] = statuses[mode].get(result.status, 0) + 1
            if mode == "proof first" and not result.attempts and result.status == "verified":
                proof_answered.append(result.timings_ms["total"])
    print(f"\n{model}: {len(rows)} questions, setup {setup_s:.1f} s")
    print(f"{'stage':<10}" + "".join(f"{m + ' p50':>18}{'p90':>9}" for m in modes))
    for s in STAGES:
        print(f"{s:<10}" + "".join(f"{statistics.median(stages[m][s]):>16.0f}ms{pct(stages[m][s], 0.9):>7.0f}ms"
                                   for m in modes))
    for m in modes:
        print(f"{m}: statuses {json.dumps(statuses[m], sort_keys=True)}")
    if proof_answered:
        print(f"proof-answered (no draft): {len(proof_answered)}/{len(rows)}, total p50 "
              f"{statistics.median(proof_answered):.0f} ms, p90 {pct(proof_answered, 0.9):.0f} ms")
    return {"p50": statistics.median(stages["proof first"]["total"]) / 1000,
            "draft_p50": statistics.median(stages["draft first"]["total"]) / 1000,
            "p90": pct(stages["proof first"]["total"], 0.9) / 1000,
            "proof_answered": proof_answered}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="default,qwen2.5-coder-0.5b", help="comma-separated registry names")
    ap.add_argument("--dataset", type=Path, default=ROOT / "eval" / "default_domain.jsonl")
    ap.add_argument("--kb", type=Path, default=ROOT / "kb")
    ap.add_argument("--rules", type=Path, default=ROOT / "rules")
    ap.add_argument("--n", type=int, default=None, help="N questions spread evenly over the file (default: all)")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    rows = [json.loads(line) for line in args.dataset.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.n and args.n < len(rows):   # evenly spread: the file is grouped by kind
        rows = [rows[i * len(rows) // args.n] for i in range(args.n)]
    print(f"machine: {torch.get_num_threads()} torch thread(s); {args.dataset.name}, {len(rows)} questions")
    out = {m: run_model(m, rows, args) for m in args.models.split(",")}
    proof = [t for r in out.values() for t in r["proof_answered"]]
    summary = ", ".join(f"{m} {r['p50']:.2f} s (p90 {r['p90']:.2f} s; draft first {r['draft_p50']:.2f} s)"
                        for m, r in out.items())
    print(f"ask p50: {summary}; proof-answered p50 "
          f"{statistics.median(proof) / 1000 if proof else float('nan'):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
