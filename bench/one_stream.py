"""One-stream greedy decode speed of a model, as bench/llamacpp.py's decode test runs it, for A/B runs of two trees.

    .venv/bin/python bench/one_stream.py [--tree DIR] [--model smollm2-135m] [--quantization auto] [--tokens 64]
                                         [--prompt-tokens 1]

``--tree`` (default: this checkout) is put first on sys.path, so an older checkout's ``neural`` can be timed by
this script: alternate two trees in one shell loop to compare before and after on a shared machine. Prints the
best of ``--repeat`` runs as wall tok/s (time after the first token) and process CPU ms per token (less
sensitive to other processes' load than wall time), with the load average.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--model", default=None, help="registry name or model path (default: the default model)")
    ap.add_argument("--quantization", default="auto", choices=("auto", "none", "int8", "int8-fast"))
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--prompt-tokens", type=int, default=1,
                    help="prompt length: the context every decode step attends over (a RAG prompt: ~1000)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if not (args.tree / "neural" / "engine.py").is_file():
        ap.error(f"--tree {args.tree}: no neural/engine.py there")
    if args.tokens < 2 or args.repeat < 1 or args.threads < 1 or args.prompt_tokens < 1:
        ap.error("--tokens must be >= 2, --repeat, --threads and --prompt-tokens >= 1")
    sys.path.insert(0, str(args.tree.resolve()))
    import torch

    from neural import Engine, EngineConfig, SamplingParams

    torch.set_num_threads(args.threads)
    engine = Engine(EngineConfig(model=args.model, num_threads=args.threads, quantization=args.quantization))
    engine.generate([1000] * 8, SamplingParams(max_tokens=8, ignore_eos=True))  # warm-up
    wall, cpu = 0.0, float("inf")
    for _ in range(args.repeat):
        engine.reset_prefix_cache()
        prompt = [1234 + i % 500 for i in range(args.prompt_tokens)]
        engine.add_request(prompt, SamplingParams(max_tokens=args.tokens, ignore_eos=True))
        engine.step()  # prefill and the first token
        start, start_cpu, steps = time.perf_counter(), time.process_time(), 0
        while engine.has_unfinished():
            engine.step()
            steps += 1
        wall = max(wall, steps / (time.perf_counter() - start))
        cpu = min(cpu, (time.process_time() - start_cpu) / steps * 1e3)
    weights = getattr(engine, "quantization", None) or "fp32"
    print(f"{args.tree.name} {weights}, {args.prompt_tokens}-token prompt: {wall:.2f} tok/s, {cpu:.1f} CPU ms/token "
          f"(best of {args.repeat}, load {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
