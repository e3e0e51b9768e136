"""fp32 vs int8 (EngineConfig.quantization) on one model, both engines in one process: decode speed (one stream,
16 concurrent streams), quality (greedy-token agreement over the first 64 tokens on the eval questions,
teacher-forced top-1 agreement and perplexity on held-apart kb/ text), and each side's resident memory (one
child process per side, since freed memory is not handed back within a process).

    .venv/bin/python bench/cpu_quant.py [--model qwen2.5-coder-0.5b] [--int8 int8|int8-fast] [--quick] [--repeat 3]
                                        [--threads N]

``--int8`` picks the int8 side's mode: two-pass activations (int8, the default) or one 7-bit pass (int8-fast).

The model is pulled through the registry if needed. Speed runs alternate the two sides and keep each side's
best (the machine is shared; noise only slows a run down); every run is printed with the load average. The
last line reads ``int8/fp32 decode: X.XX× one stream, Y.YY× 16 streams``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from neural import Engine, EngineConfig, SamplingParams  # noqa: E402
from neural.quant_quality import greedy_agreement, perplexity, top1_agreement  # noqa: E402

HELD_APART = ["kb/finance/travel_expense_2025.md", "kb/hr/leave_policy.md", "kb/it/password_policy.md"]
SIDES = ("none", "int8")


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def ensure_model(name: str) -> None:
    from neural.model_registry import REGISTRY, installed, pull

    if name in REGISTRY and not installed(REGISTRY[name]):
        print(f"pulling {name} ...", flush=True)
        pull(name)


def chat(engine: Engine, text: str) -> str:
    return engine.tokenizer.apply_chat_template([{"role": "user", "content": text}])


def eval_questions(n: int) -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "eval/default_domain.jsonl").read_text().splitlines() if line.strip()]
    return [r["question"] for r in rows[:n]]


def held_apart_ids(engine: Engine, tokens: int) -> list[int]:
    texts = [(ROOT / p).read_text(encoding="utf-8") for p in HELD_APART if (ROOT / p).is_file()]
    if not texts:  # a kb without those files: any three documents, in a fixed order
        texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "kb").rglob("*.md"))[:3]]
    return engine.tokenizer.encode("\n\n".join(texts))[:tokens]


def one_stream(engine: Engine, prompt: str, tokens: int) -> float:
    """Decode tokens/s of one request (time after its first token)."""
    engine.reset_prefix_cache()
    out = engine.generate(prompt, SamplingParams(max_tokens=tokens, ignore_eos=True))[0]
    m = out.metrics
    return (m.generated_tokens - 1) / (m.e2e_s - m.ttft_s)


def streams(engine: Engine, prompts: list[str], tokens: int) -> float:
    """Generated tokens/s of len(prompts) concurrent requests, wall time from submission to the last token."""
    engine.reset_prefix_cache()
    start = time.perf_counter()
    outs = engine.generate(prompts, SamplingParams(max_tokens=tokens, ignore_eos=True))
    return sum(len(o.token_ids) for o in outs) / (time.perf_counter() - start)


def rss_child(model: str, quantization: str, threads: int) -> None:  # quantization: "none" or an int8 mode
    """Child mode: build one engine, run a short request, print its memory as JSON: the process's resident and
    peak, what it held before the engine was built (torch and the modules imported), and the KV cache pool,
    which both sides allocate at the same size."""
    before = _status_mb()["VmRSS"]
    engine = Engine(EngineConfig(model=model, quantization=quantization, num_threads=threads))
    engine.generate(chat(engine, "Hello"), SamplingParams(max_tokens=8, ignore_eos=True))
    mb = _status_mb()
    kv = engine.runner.kv_cache
    print(json.dumps({"rss_mb": mb["VmRSS"], "peak_mb": mb["VmHWM"], "runtime_mb": before,
                      "kv_mb": kv.numel() * kv.element_size() / 2**20}))


def _status_mb() -> dict[str, float]:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {k: int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}


def measure_rss(model: str, threads: int, int8_mode: str) -> dict[str, dict]:
    out = {}
    for side in SIDES:
        cmd = [sys.executable, __file__, "--model", model, "--threads", str(threads), "--rss-child",
               "none" if side == "none" else int8_mode]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            raise SystemExit(f"rss child ({side}) failed:\n{done.stderr[-2000:]}")
        out[side] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def make_prompts(engine: Engine, n: int) -> list[str]:
    qs = eval_questions(max(n, 1))
    context = (ROOT / HELD_APART[0]).read_text(encoding="utf-8")[:1200] if (ROOT / HELD_APART[0]).is_file() else ""
    # half bare questions, half with a document in front: prompt lengths ~30 to ~400 tokens, as RAG sends
    return [chat(engine, f"Context: {context}\n\nQuestion: {qs[i % len(qs)]}" if i % 2 else qs[i % len(qs)])
            for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--quick", action="store_true", help="fewer tokens and repeats: ~5-10 minutes on 2 cores")
    ap.add_argument("--repeat", type=int, default=None, help="speed runs per side (default 3, --quick 2)")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--concurrent", type=int, default=16)
    ap.add_argument("--no-rss", action="store_true", help="skip the two child processes measuring memory")
    ap.add_argument("--int8", choices=("int8", "int8-fast"), default="int8",
                    help="the int8 side: two-pass activations (int8, default) or one 7-bit pass (int8-fast)")
    ap.add_argument("--rss-child", choices=("none", "int8", "int8-fast"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        return rss_child(args.model, args.rss_child, args.threads)
    repeat = args.repeat or (2 if args.quick else 3)
    tokens = 32 if args.quick else 64
    n_quality = 4 if args.quick else 8
    ensure_model(args.model)
    print(f"model {args.model}, int8 side: {args.int8}, {args.threads} threads, {load()}", flush=True)

    engines = {}
    for side in SIDES:
        start = time.perf_counter()
        mode = "none" if side == "none" else args.int8
        engines[side] = Engine(EngineConfig(model=args.model, quantization=mode, num_threads=args.threads))
        print(f"{side}: engine ready in {time.perf_counter() - start:.1f} s ({load()})", flush=True)
    fp32, int8 = engines["none"], engines["int8"]
    plan = int8.int8_plan
    print(f"int8 plan: {plan.summary()}" + "".join(f"\n  fp32 kept: {n} ({why})" for n, why in
                                                   list(plan.kept.items())[:6]), flush=True)

    # ---- quality
    questions = [chat(fp32, q) for q in eval_questions(n_quality)]
    sp = SamplingParams(max_tokens=64, ignore_eos=True)
    ref = [o.token_ids for o in fp32.generate(questions, sp)]
    got = [o.token_ids for o in int8.generate(questions, sp)]
    first_diff = [next((i for i, (a, b) in enumerate(zip(x, y)) if a != b), len(y)) for x, y in zip(got, ref)]
    ids = held_apart_ids(fp32, 512)
    ppl32, ppl8 = perplexity(fp32, ids), perplexity(int8, ids)
    print(f"greedy tokens identical over the first 64, {len(questions)} eval questions: "
          f"{greedy_agreement(got, ref):.1%} (first difference at {first_diff})")
    print(f"held-apart text ({len(ids)} tokens of {', '.join(HELD_APART)}): perplexity fp32 {ppl32:.3f}, int8 "
          f"{ppl8:.3f} ({ppl8 / ppl32 - 1:+.2%}); teacher-forced top-1 agreement {top1_agreement(int8, fp32, ids):.1%}",
          flush=True)

    # ---- speed, alternating
    single = chat(fp32, eval_questions(1)[0])
    prompts = make_prompts(fp32, args.concurrent)
    best: dict[tuple[str, str], float] = {}
    for rnd in range(repeat):
        for side in (SIDES if rnd % 2 == 0 else SIDES[::-1]):
            for kind, fn in (("one stream", lambda e: one_stream(e, single, tokens)),
                             (f"{args.concurrent} streams", lambda e: streams(e, prompts, tokens))):
                tps = fn(engines[side])
                best[(side, kind)] = max(best.get((side, kind), 0.0), tps)
                print(f"round {rnd + 1} {side:5s} {kind:11s}: {tps:7.2f} tok/s ({load()})", flush=True)

    if not args.no_rss:
        del engines, fp32, int8
        rss = measure_rss(args.model, args.threads, args.int8)
        r32, r8 = rss["none"]["rss_mb"], rss["int8"]["rss_mb"]
        print(f"resident memory after a short request: fp32 {r32:.0f} MB (peak {rss['none']['peak_mb']:.0f}), "
              f"int8 {r8:.0f} MB (peak {rss['int8']['peak_mb']:.0f}): int8/fp32 {r8 / r32:.2f}")
        # the model's own share: less the runtime before loading and the KV pool (the same on both sides)
        m32, m8 = (rss[s]["rss_mb"] - rss[s]["runtime_mb"] - rss[s]["kv_mb"] for s in ("none", "int8"))
        print(f"model resident (less the {rss['none']['runtime_mb']:.0f} MB runtime and the {rss['none']['kv_mb']:.0f} "
              f"MB KV pool): fp32 {m32:.0f} MB, int8 {m8:.0f} MB: int8/fp32 {m8 / m32:.2f}")
    k1, k16 = "one stream", f"{args.concurrent} streams"
    for kind in (k1, k16):
        print(f"best of {repeat}, {kind}: fp32 {best[('none', kind)]:.2f} tok/s, int8 {best[('int8', kind)]:.2f} tok/s")
    print(f"int8/fp32 decode: {best[('int8', k1)] / best[('none', k1)]:.2f}× one stream, "
          f"{best[('int8', k16)] / best[('none', k16)]:.2f}× {args.concurrent} streams")


if __name__ == "__main__":
    main()
