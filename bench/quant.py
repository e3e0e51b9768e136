"""Engine with packed GGUF weights (quantization="gguf") vs the dense engine on the default model, one run.

Weight memory (parameter/buffer bytes), peak RSS after load (each mode in a fresh subprocess), greedy
agreement, and CPU decode tokens/s at batch 1 and batch 4 (dense and packed runs alternated, best of N).

    python bench/quant.py [--max-tokens 32] [--repeats 3] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from neural.quant import weight_bytes  # noqa: E402

PROMPTS = ["What is the capital of France?", "Write one sentence about rain.",
           "List three colours.", "Explain what a cache is in one sentence."]
KV_BYTES = 64 * 1024 * 1024


def _load(quantization: str | None, threads: int):
    from neural import Engine, EngineConfig

    t0 = time.perf_counter()
    engine = Engine(EngineConfig(device="cpu", num_threads=threads, quantization=quantization, kv_cache_bytes=KV_BYTES))
    return engine, time.perf_counter() - t0


def peak_rss_child(quantization: str | None, threads: int) -> None:
    """Subprocess body: load one engine, print its peak RSS (MB) and load time as JSON."""
    import resource

    engine, load_s = _load(quantization, threads)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(json.dumps({"rss_mb": rss, "load_s": load_s, "weights_mb": weight_bytes(engine.runner.model) / 1e6}))


def measure_in_subprocess(quantization: str | None, threads: int) -> dict:
    arg = quantization or "none"
    out = subprocess.run([sys.executable, __file__, "--rss-child", arg, "--threads", str(threads)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def decode(engine, prompts: list[str], sp) -> tuple[list[list[int]], float]:
    texts = [engine.tokenizer.apply_chat_template([{"role": "user", "content": p}]) for p in prompts]
    t0 = time.perf_counter()
    outs = [engine.generate(t, sp)[0] for t in texts] if len(prompts) == 1 else engine.generate(texts, sp)
    dt = time.perf_counter() - t0
    return [o.token_ids for o in outs], sum(len(o.token_ids) for o in outs) / dt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs per mode; best is reported")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rss-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child is not None:
        peak_rss_child(None if args.rss_child == "none" else args.rss_child, args.threads)
        return 0
    from neural import SamplingParams

    torch.set_num_threads(args.threads)
    rss = {mode: measure_in_subprocess(mode, args.threads) for mode in (None, "gguf")}
    engines = {mode: _load(mode, args.threads)[0] for mode in (None, "gguf")}
    sp = SamplingParams(max_tokens=args.max_tokens, temperature=0.0, ignore_eos=True)
    ids = {mode: decode(e, PROMPTS, sp)[0] for mode, e in engines.items()}  # also warms both up
    best: dict[tuple, float] = {}
    for _ in range(args.repeats):
        for batch in (1, len(PROMPTS)):
            for mode, engine in engines.items():
                _, tps = decode(engine, PROMPTS[:batch], sp)
                best[(mode, batch)] = max(best.get((mode, batch), 0.0), tps)
    dense_b, packed_b = (weight_bytes(engines[m].runner.model) for m in (None, "gguf"))
    same = sum(a == b for a, b in zip(ids[None], ids["gguf"]))
    agree = sum(sum(x == y for x, y in zip(a, b)) for a, b in zip(ids[None], ids["gguf"]))
    print(f"weight memory: dense fp32 {dense_b / 1e6:.1f} MB, packed {packed_b / 1e6:.1f} MB "
          f"= {packed_b / dense_b:.1%} of fp32")
    for mode, r in rss.items():
        print(f"  {mode or 'dense'}: peak RSS after load {r['rss_mb']:.0f} MB (KV cache {KV_BYTES >> 20} MiB), "
              f"load {r['load_s']:.1f} s")
    print(f"greedy agreement: {same}/{len(PROMPTS)} sequences identical, {agree}/{sum(map(len, ids[None]))} tokens")
    for batch in (1, len(PROMPTS)):
        d, p = best[(None, batch)], best[("gguf", batch)]
        print(f"CPU decode, {args.threads} thread(s), batch {batch}: dense {d:.1f} tok/s, packed {p:.1f} tok/s "
              f"= {p / d:.2f}x (best of {args.repeats})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
