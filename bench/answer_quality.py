"""Answer quality of the default pipeline per prompt/sampling variant, all variants in one run.

Usage: .venv/bin/python bench/answer_quality.py [--n 8] [--seed 0] [--max-tokens 64]
           [--variants baseline,best] [--policy flag] [--out runs/answer_quality.jsonl]

A fixed-seed subset of the answerable/numeric questions of eval/default_domain.jsonl (English and
Chinese, shared by every variant) goes through pipeline.default_answerer() with each AnswererConfig
variant below; one engine, retriever and rule base serve them all, and variants are interleaved per
question so machine-load drift hits them alike. Printed per variant: the fraction of answers that
state the gold value (pipeline.evaluation.scoring.score_answer: gold annotations only, never the
verifier), the hallucination fraction by the same scorer, status counts, mean latency and tokens,
and each figure's ratio against the first variant (the baseline) measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# name -> AnswererConfig overrides (+ "max_tokens" / "top_k" per-request options)
VARIANTS: dict[str, dict] = {
    "baseline": {"max_tokens": 256},
    "rep1.2": {"max_tokens": 256, "repetition_penalty": 1.2},
    "stop": {"max_tokens": 256, "stop": ("\n\n",)},
    "b450": {"max_tokens": 256, "source_budget": 450},
    "b900": {"max_tokens": 256, "source_budget": 900},
    "qfirst": {"max_tokens": 256, "question_first": True},
    "context": {"max_tokens": 256, "prompt_form": "context"},
    "short": {"max_tokens": 64},
    "best": {},                      # the shipped defaults: AnswererConfig() + DEFAULT_MAX_TOKENS
}


def questions(n: int, seed: int) -> list:
    from pipeline.evaluation.dataset import load_dataset
    items = [i for i in load_dataset(ROOT / "eval" / "default_domain.jsonl", "system").items
             if i.kind in ("answerable", "numeric")]
    rng = random.Random(seed)
    zh = [i for i in items if i.language == "zh"]
    en = [i for i in items if i.language != "zh"]
    n_zh = max(1, round(n * 3 / 8)) if n > 1 else 0      # ~3/8 Chinese, as in the set's answerable/numeric
    chosen = rng.sample(en, min(len(en), n - n_zh)) + rng.sample(zh, min(len(zh), n_zh))
    return sorted(chosen, key=lambda i: i.id)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--policy", default="flag", choices=["flag", "abstain", "regenerate"])
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--out", default=None, help="JSON Lines of every answer (default: none)")
    args = ap.parse_args()
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or not names or args.n < 1:
        print(f"error: unknown variants {unknown}; choose from {', '.join(VARIANTS)} (and --n >= 1)", file=sys.stderr)
        return 2

    from pipeline import AnswererConfig, AskOptions, default_answerer
    from pipeline.defaults import DEFAULT_MAX_TOKENS
    from pipeline.evaluation.processors import read_support
    from pipeline.evaluation.scoring import is_abstention, score_answer

    VARIANTS["best"] = {"max_tokens": DEFAULT_MAX_TOKENS}   # + AnswererConfig()'s shipped defaults
    items = questions(args.n, args.seed)
    support = read_support(ROOT / "kb", items)
    t = time.perf_counter()
    base = default_answerer()
    print(f"setup: {time.perf_counter() - t:.1f} s; questions: {[i.id for i in items]}", flush=True)
    answerers, options = {}, {}
    for name in names:
        over = dict(VARIANTS[name])
        max_tokens = over.pop("max_tokens", 256)
        # AnswererConfig() defaults are the shipped defaults; a variant names every knob it changes
        # relative to the raw (pre-tuning) settings, so start from those.
        raw = dict(prompt_form="sources", question_first=False, source_budget=None, repetition_penalty=1.0, stop=())
        config = AnswererConfig() if name == "best" else AnswererConfig(**{**raw, **over})
        answerers[name] = type(base)(base.generator, base.retriever, base.holder, config)
        options[name] = AskOptions(top_k=args.top_k, max_tokens=max_tokens, policy=args.policy, temperature=0.0, seed=0)
    rows: dict[str, list[dict]] = {n: [] for n in names}
    sink = open(args.out, "w", encoding="utf-8") if args.out else None
    for item in items:
        for name in names:
            t = time.perf_counter()
            r = answerers[name].ask(item.question, options[name])
            dt = time.perf_counter() - t
            abstained = r.status == "abstained" or is_abstention(r.answer)
            sc = score_answer(item, r.answer, abstained=abstained, support_texts=[support[d] for d in item.support])
            row = {"variant": name, "id": item.id, "lang": item.language, "status": r.status,
                   "correct": bool(sc.correct), "hallucinated": sc.hallucinated, "latency_s": round(dt, 2),
                   "prompt_tokens": r.usage["prompt_tokens"], "completion_tokens": r.usage["completion_tokens"],
                   "answer": r.answer}
            rows[name].append(row)
            print(f"  {item.id:8s} {name:9s} {r.status:10s} correct={row['correct']!s:5s} {dt:6.1f}s "
                  f"{row['prompt_tokens']}+{row['completion_tokens']} tok  {r.answer[:90]!r}", flush=True)
            if sink:
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
    report(rows, names)
    return 0


def report(rows: dict[str, list[dict]], names: list[str]) -> None:
    def stats(rs: list[dict]) -> dict:
        return {"correct": sum(r["correct"] for r in rs) / len(rs),
                "halluc": sum(r["hallucinated"] for r in rs) / len(rs),
                "latency": statistics.mean(r["latency_s"] for r in rs),
                "prompt": statistics.mean(r["prompt_tokens"] for r in rs),
                "completion": statistics.mean(r["completion_tokens"] for r in rs)}
    base = stats(rows[names[0]])
    print(f"\n| variant | gold value stated | en | zh | hallucinated | statuses | mean latency s (× {names[0]}) "
          f"| prompt tok | completion tok |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        rs = rows[name]
        s = stats(rs)
        by = {lang: [r for r in rs if (r["lang"] == "zh") == (lang == "zh")] for lang in ("en", "zh")}
        frac = {k: f"{sum(r['correct'] for r in v)}/{len(v)}" for k, v in by.items()}
        counts: dict[str, int] = {}
        for r in rs:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        print(f"| {name} | {sum(r['correct'] for r in rs)}/{len(rs)} ({s['correct']:.0%}) | {frac['en']} | {frac['zh']} "
              f"| {s['halluc']:.0%} | {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} "
              f"| {s['latency']:.1f} ({s['latency'] / base['latency']:.2f}×) | {s['prompt']:.0f} | {s['completion']:.0f} |")


if __name__ == "__main__":
    sys.exit(main())
