"""Context recall vs prompt size vs prefill time per source budget, against the old fixed cut, in one run.

Usage: .venv/bin/python bench/context_budget.py [--model NAME] [--budgets 300,450,600,900] [--timed 20]
           [--dataset eval/default_domain.jsonl --kb kb --rules rules]

For every question of the dataset and every variant, the exact first-attempt prompt is built (no generation)
and scored like `verirag eval --mode context` (gold facts in the retrieved passages / in the prompt, support
documents among the prompt's sources). Variants: `cut3x4`, the pipeline before the budget (the 3 best passages,
each cut to its 4 sentences/rows nearest the question), and one per source budget. Then the prefill of the
first --timed questions' prompts is timed on the engine (max_tokens=1, prefix cache reset before each),
variants alternating per question; the table gives each variant's mean prefill against `cut3x4`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--budgets", default="300,450,600,900")
    ap.add_argument("--timed", type=int, default=20, help="questions whose prompts are prefilled and timed")
    ap.add_argument("--dataset", default=str(ROOT / "eval" / "default_domain.jsonl"))
    ap.add_argument("--kb", default=str(ROOT / "kb"))
    ap.add_argument("--rules", default=str(ROOT / "rules"))
    args = ap.parse_args()

    from neural import SamplingParams
    from pipeline import AnswererConfig, AskOptions, default_answerer
    from pipeline.evaluation.context_recall import ContextProcessor, context_summary
    from pipeline.evaluation.dataset import load_dataset
    from pipeline.evaluation.processors import read_support
    from pipeline.generate.profiles import PromptProfile, profile_for
    from pipeline.generate.sources import focus_passage

    ds = load_dataset(args.dataset, "system")
    support = read_support(args.kb, ds.items)
    base = default_answerer(args.kb, args.rules, args.model)
    style = profile_for(base.generator).style
    opts = AskOptions()
    variants = {"cut3x4": None, **{f"budget {b}": int(b) for b in args.budgets.split(",")}}
    prompts: dict[str, dict[str, object]] = {}
    rows = []
    for name, budget in variants.items():
        answerer = type(base)(base.generator, base.retriever, base.holder,
                              AnswererConfig(profile=PromptProfile(name, style, budget or 10**6)))
        if budget is None:   # the old pipeline: 3 best passages, each cut to its 4 nearest segments
            answerer._candidates = lambda ctx: [focus_passage(p, ctx.question, 4) for p in ctx.candidates[:3]]
        prepared: dict[str, object] = {}

        def prepare(q: str, a=answerer, store=prepared) -> object:
            store[q] = a.prepare(q, opts)
            return store[q]
        records = [ContextProcessor(prepare, support)(item) for item in ds.items]
        prompts[name] = prepared
        s = context_summary(records)
        rows.append((name, s))
        print(f"{name:12s} context {s['context_recall']:.3f} support {s['support_recall']:.3f} "
              f"multi-hop {s['by_kind'].get('multi_hop', {}).get('context_recall')} zh "
              f"{s['by_language'].get('zh', {}).get('context_recall')} tokens {s['mean_prompt_tokens']:.0f}", flush=True)

    engine = base.generator
    times: dict[str, list[float]] = {name: [] for name in variants}
    for item in ds.items[:args.timed]:
        for name in variants:
            prompt = prompts[name][item.question].prompt
            engine.reset_prefix_cache()
            t = time.perf_counter()
            engine.generate(prompt.text, SamplingParams(max_tokens=1, temperature=0.0))
            times[name].append(time.perf_counter() - t)
    ref = statistics.mean(times["cut3x4"])
    print(f"\nmodel {args.model or 'default'}; prefill timed on the first {args.timed} questions, variants alternating")
    print("| variant | context recall | support recall | multi-hop | zh | mean prompt tokens | mean prefill ms (× cut3x4) |")
    print("|---|---|---|---|---|---|---|")
    for name, s in rows:
        ms = statistics.mean(times[name])
        print(f"| {name} | {s['context_recall']:.3f} | {s['support_recall']:.3f} "
              f"| {s['by_kind'].get('multi_hop', {}).get('context_recall')} | {s['by_language'].get('zh', {}).get('context_recall')} "
              f"| {s['mean_prompt_tokens']:.0f} | {ms * 1000:.0f} ({ms / ref:.2f}×) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
