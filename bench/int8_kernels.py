"""One projection at a time: fp32 (the engine's own path) against int8 in one pass (7-bit activations) and in
two passes (~14-bit), ms per call at 1, 16 and 256 rows, best of --repeat, in one process.

    .venv/bin/python bench/int8_kernels.py [--threads 2] [--repeat 15]

fp32 is MKL at one row and oneDNN's prepacked weights at more (what cpu_ops.linear_cpu / PrepackedLinear run);
the shapes are Qwen2.5-0.5B's gate_up, down and qkv and SmolLM2-135M's gate_up and down.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from neural.models.int8_linear import Int8Linear  # noqa: E402
from neural.models.onednn_linear import PrepackedLinear, onednn_available  # noqa: E402

SHAPES = [(9728, 896), (896, 4864), (1152, 896), (3072, 576), (576, 1536)]
ROWS = (1, 16, 256)


def best_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


@torch.inference_mode()
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"{args.threads} threads; ms per call, best of {args.repeat}")
    print("| shape | rows | fp32 | int8 one pass | int8 two passes | two/one | two/fp32 |")
    print("|---|---|---|---|---|---|---|")
    for out_f, in_f in SHAPES:
        w = torch.randn(out_f, in_f) * 0.02
        one, two = Int8Linear.from_float(w, residual=False), Int8Linear.from_float(w)
        packed = PrepackedLinear(w) if onednn_available() else None
        for rows in ROWS:
            x = torch.randn(rows, in_f)
            fp32_op = (lambda: packed(x, w)) if packed is not None and rows > 1 else (lambda: F.linear(x, w))
            t32, t1, t2 = (best_ms(fp32_op, args.repeat), best_ms(lambda: one(x), args.repeat),
                           best_ms(lambda: two(x), args.repeat))
            print(f"| {out_f}x{in_f} | {rows} | {t32:.3f} | {t1:.3f} | {t2:.3f} | {t2 / t1:.2f} | {t2 / t32:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
