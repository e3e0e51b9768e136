"""Speculative decoding benchmark: tokens/s with vs without prompt lookup on RAG-style prompts (answers
quote the sources) and on prompts with nothing to copy, single stream, greedy, default model.

The two engines run interleaved (ABBA per prompt) in one process so that load from other processes on a
shared machine hits both alike; greedy outputs are checked identical. Decode tokens/s excludes the
prefill (time to first token), which speculation does not touch.

    .venv/bin/python bench/speculative.py [--max-tokens 128] [--threads 2] [--k 4] [--only rag|open] [--model M]
    (--lookup-min/--lookup-max/--min-acceptance override the SpeculativeConfig defaults; --method draft)
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from neural import Engine, EngineConfig, SamplingParams  # noqa: E402
from neural.spec_decode import SpeculativeConfig  # noqa: E402

# (document that answers, distractor document, question)
RAG = [
    ("hr/leave_policy.md", "it/password_policy.md", "How many days of annual leave can be carried over, and until when must they be taken?"),
    ("hr/remote_work.md", "sales/discount_policy.md", "Who is eligible for remote work?"),
    ("it/password_policy.md", "hr/leave_policy.md", "What are the password requirements?"),
    ("support/sla.md", "finance/procurement_approval.md", "What are the response times for support tickets?"),
    ("finance/procurement_approval.md", "support/sla.md", "Who must approve a purchase?"),
    ("products/ax200.md", "hr/remote_work.md", "What are the specifications of the AX-200?"),
]
OPEN = [  # nothing in the prompt to copy
    "Write a short story about a dragon who learns to cook.",
    "Explain why the sky is blue to a five-year-old.",
    "Give me three ideas for a birthday party.",
    "What would happen if the moon disappeared?",
]


def passage(path: str, chars: int) -> str:
    text = (ROOT / "kb" / path).read_text(encoding="utf-8")
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S).strip()
    return text[:chars].rsplit("\n", 1)[0]


def rag_messages(doc: str, distractor: str, question: str) -> list[dict]:
    sources = f"[1] {passage(doc, 1400)}\n\n[2] {passage(distractor, 600)}"
    return [
        {"role": "system", "content": "Answer the question using only the sources. Quote the sentences "
                                      "of the sources that answer it, word for word, and cite them like [1]."},
        {"role": "user", "content": f"Sources:\n{sources}\n\nQuestion: {question}"},
    ]


def run_one(engine: Engine, prompt: str, max_tokens: int) -> tuple[list[int], float, float]:
    out = engine.generate(prompt, SamplingParams(max_tokens=max_tokens))[0]
    m = out.metrics
    return out.token_ids, m.e2e_s, m.e2e_s - m.ttft_s


def bench(plain: Engine, spec: Engine, prompts: list[str], max_tokens: int) -> dict:
    t = {"plain": [0.0, 0.0, 0], "spec": [0.0, 0.0, 0]}  # e2e s, decode s, decode tokens
    identical = True
    before = spec.speculator.metrics.as_dict()
    for i, p in enumerate(prompts):
        order = [("plain", plain), ("spec", spec)]
        for name, eng in order if i % 2 == 0 else order[::-1]:
            ids, e2e, dec = run_one(eng, p, max_tokens)
            t[name][0] += e2e
            t[name][1] += dec
            t[name][2] += len(ids) - 1
            if name == "plain":
                ref = ids
            else:
                got = ids
        identical &= ref == got
    after = spec.speculator.metrics.as_dict()
    proposed = after["proposed_tokens"] - before["proposed_tokens"]
    accepted = after["accepted_tokens"] - before["accepted_tokens"]
    steps = after["verify_steps"] - before["verify_steps"]
    tps = {k: v[2] / v[1] for k, v in t.items()}
    return {
        "plain_decode_tok_s": tps["plain"], "spec_decode_tok_s": tps["spec"],
        "decode_speedup": tps["spec"] / tps["plain"], "e2e_speedup": t["plain"][0] / t["spec"][0],
        "tokens": t["spec"][2], "identical": identical,
        "acceptance_rate": accepted / proposed if proposed else 0.0,
        "mean_accepted_length": accepted / steps if steps else 0.0, "verify_steps": steps,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch threads (default: all cores)")
    ap.add_argument("--k", type=int, default=None, help="most tokens proposed per step (default: the config's)")
    ap.add_argument("--method", default="ngram", choices=["ngram", "draft"])
    ap.add_argument("--draft-layers", type=int, default=None)
    ap.add_argument("--lookup-min", type=int, default=None, help="prompt_lookup_min (default: the config's)")
    ap.add_argument("--lookup-max", type=int, default=None, help="prompt_lookup_max (default: the config's)")
    ap.add_argument("--min-acceptance", type=float, default=None,
                    help="min_acceptance_rate below which a request pauses speculation (0 = never pause)")
    ap.add_argument("--only", choices=["rag", "open"], default=None, help="run one prompt set only")
    ap.add_argument("--model", default=None, help="registry name or model path (default: the default model)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = {"model": args.model} if args.model else {}
    plain = Engine(EngineConfig(**model))
    flags = {"num_speculative_tokens": args.k, "prompt_lookup_min": args.lookup_min,
             "prompt_lookup_max": args.lookup_max, "min_acceptance_rate": args.min_acceptance}
    overrides = {name: value for name, value in flags.items() if value is not None}
    spec_cfg = SpeculativeConfig(method=args.method, draft_num_layers=args.draft_layers, **overrides)
    spec = Engine(EngineConfig(speculative=spec_cfg, **model))
    tok = plain.tokenizer
    rag = [tok.apply_chat_template(rag_messages(*r)) for r in RAG]
    open_ = [tok.apply_chat_template([{"role": "user", "content": q}]) for q in OPEN]
    run_one(plain, rag[0], 8), run_one(spec, rag[0], 8)  # warm-up
    print(f"machine: {torch.get_num_threads()} torch thread(s), model {args.model or 'default'} ({plain.quantization}), "
          f"greedy, max_tokens={args.max_tokens}, method={args.method}, k<={spec_cfg.num_speculative_tokens}, "
          f"lookup n={spec_cfg.prompt_lookup_min}..{spec_cfg.prompt_lookup_max}, "
          f"pause below acceptance {spec_cfg.min_acceptance_rate}")
    sets = (("rag", "rag (answers quote the sources)", rag), ("open", "open (nothing to copy)", open_))
    for key, name, prompts in sets:
        if args.only not in (None, key):
            continue
        r = bench(plain, spec, prompts, args.max_tokens)
        print(f"{name}: {len(prompts)} prompts, {r['tokens']} decode tokens, greedy identical: {r['identical']}")
        print(f"  decode tok/s  plain {r['plain_decode_tok_s']:.1f}  speculative {r['spec_decode_tok_s']:.1f}  "
              f"-> {r['decode_speedup']:.2f}x   (end-to-end incl. prefill {r['e2e_speedup']:.2f}x)")
        print(f"  acceptance rate {r['acceptance_rate']:.2f}, mean accepted length "
              f"{r['mean_accepted_length']:.2f} per verify step, {r['verify_steps']} verify steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
