"""Prompts per model: answer quality of one model's first draft per prompt profile, all profiles in one run.

Usage: .venv/bin/python bench/answer_quality.py [--model NAME] [--n 8] [--seed 0]
           [--variants small,medium,...] [--dataset eval/default_domain.jsonl --kb kb --rules rules]
           [--out runs/answer_quality.jsonl]

A fixed-seed subset of the factual questions (answerable, numeric, superseded; English and Chinese) goes
through one pipeline per prompt variant (pipeline.generate.profiles.PromptProfile: form, abstention hint, doc
ids, Chinese wording, source budget); the model, retriever and rules are shared and the variants take turns
per question, so machine-load drift hits them alike. Policy `flag` and no symbolic answers: what is measured
is the prompt's first draft. Printed per variant: gold value stated (pipeline.evaluation.scoring, gold
annotations only, never the verifier), false abstentions (the model declining a question whose answer is in
its sources), hallucinated drafts, statuses, latency and tokens, with ratios against the first variant.
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


def variants() -> dict:
    from pipeline.generate.profiles import MEDIUM, SMALL, PromptProfile
    from pipeline.generate.prompts import PromptStyle
    return {
        "small": SMALL,
        "medium": MEDIUM,
        "small-hint-off": PromptProfile("x", PromptStyle("sources", abstain_hint=False), SMALL.source_budget),
        "ctx-hint": PromptProfile("x", PromptStyle("context", abstain_hint=True), MEDIUM.source_budget),
        "ctx-nodoc": PromptProfile("x", PromptStyle("context", False, doc_ids=False), MEDIUM.source_budget),
        "ctx-nodoc-zh": PromptProfile("x", PromptStyle("context", False, doc_ids=False, localize=True),
                                      MEDIUM.source_budget),
        "src-nodoc-zh": PromptProfile("x", PromptStyle("sources", False, doc_ids=False, localize=True),
                                      MEDIUM.source_budget),
        "ctx-nodoc-zh-450": PromptProfile("x", PromptStyle("context", False, doc_ids=False, localize=True), 450),
    }


def questions(path: Path, n: int, seed: int) -> list:
    from pipeline.evaluation.dataset import load_dataset
    items = [i for i in load_dataset(path, "system").items if i.kind in ("answerable", "numeric", "superseded")]
    rng = random.Random(seed)
    zh = [i for i in items if i.language == "zh"]
    en = [i for i in items if i.language != "zh"]
    n_zh = max(1, round(n * 3 / 8)) if n > 1 else 0      # ~3/8 Chinese, as in the sets
    chosen = rng.sample(en, min(len(en), n - n_zh)) + rng.sample(zh, min(len(zh), n_zh))
    return sorted(chosen, key=lambda i: i.id)


def main() -> int:
    table = variants()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default="small,medium")
    ap.add_argument("--dataset", default=str(ROOT / "eval" / "default_domain.jsonl"))
    ap.add_argument("--kb", default=str(ROOT / "kb"))
    ap.add_argument("--rules", default=str(ROOT / "rules"))
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--out", default=None, help="JSON Lines of every answer (default: none)")
    args = ap.parse_args()
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in table]
    if unknown or not names or args.n < 1:
        print(f"error: unknown variants {unknown}; choose from {', '.join(table)} (and --n >= 1)", file=sys.stderr)
        return 2

    from pipeline import AnswererConfig, AskOptions, default_answerer
    from pipeline.evaluation.processors import read_support
    from pipeline.evaluation.scoring import is_abstention, score_answer

    items = questions(Path(args.dataset), args.n, args.seed)
    support = read_support(args.kb, items)
    t = time.perf_counter()
    base = default_answerer(args.kb, args.rules, args.model)
    print(f"setup: {time.perf_counter() - t:.1f} s; model {args.model or 'default'}; questions: "
          f"{[i.id for i in items]}", flush=True)
    answerers = {name: type(base)(base.generator, base.retriever, base.holder,
                                  AnswererConfig(profile=table[name], symbolic_answers=False, lm_extraction=False))
                 for name in names}
    options = AskOptions(max_tokens=args.max_tokens, policy="flag", temperature=0.0, seed=0)
    rows: dict[str, list[dict]] = {n: [] for n in names}
    sink = open(args.out, "w", encoding="utf-8") if args.out else None
    for item in items:
        for name in names:
            t = time.perf_counter()
            r = answerers[name].ask(item.question, options)
            dt = time.perf_counter() - t
            abstained = r.status == "abstained" or is_abstention(r.answer)
            sc = score_answer(item, r.answer, abstained=abstained, support_texts=[support[d] for d in item.support])
            row = {"variant": name, "id": item.id, "lang": item.language, "status": r.status,
                   "correct": bool(sc.correct), "abstained": abstained, "hallucinated": sc.hallucinated,
                   "latency_s": round(dt, 2), "prompt_tokens": r.usage["prompt_tokens"],
                   "completion_tokens": r.usage["completion_tokens"], "answer": r.answer}
            rows[name].append(row)
            print(f"  {item.id:8s} {name:16s} {r.status:10s} correct={row['correct']!s:5s} {dt:6.1f}s "
                  f"{row['prompt_tokens']}+{row['completion_tokens']} tok  {r.answer[:90]!r}", flush=True)
            if sink:
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
    report(rows, names)
    return 0


def report(rows: dict[str, list[dict]], names: list[str]) -> None:
    def mean(rs: list[dict], key: str) -> float:
        return statistics.mean(r[key] for r in rs)
    base_latency = mean(rows[names[0]], "latency_s")
    print(f"\n| variant | gold value stated | en | zh | false abstention | hallucinated | statuses "
          f"| mean latency s (× {names[0]}) | prompt tok | completion tok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        rs = rows[name]
        by = {lang: [r for r in rs if (r["lang"] == "zh") == (lang == "zh")] for lang in ("en", "zh")}
        frac = {k: f"{sum(r['correct'] for r in v)}/{len(v)}" for k, v in by.items()}
        counts: dict[str, int] = {}
        for r in rs:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        print(f"| {name} | {sum(r['correct'] for r in rs)}/{len(rs)} | {frac['en']} | {frac['zh']} "
              f"| {sum(r['abstained'] for r in rs)}/{len(rs)} | {sum(r['hallucinated'] for r in rs)}/{len(rs)} "
              f"| {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} "
              f"| {mean(rs, 'latency_s'):.1f} ({mean(rs, 'latency_s') / base_latency:.2f}×) "
              f"| {mean(rs, 'prompt_tokens'):.0f} | {mean(rs, 'completion_tokens'):.0f} |")


if __name__ == "__main__":
    sys.exit(main())
