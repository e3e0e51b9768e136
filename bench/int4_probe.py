"""PyTorch's own CPU int4 weight-only matmul against the int8 two-pass linear: one row and five, at the shapes of
SmolLM2-135M and Qwen2.5-0.5B, time per call (best of 5 x 200) and relative error against float32 on random weights.

    .venv/bin/python bench/int4_probe.py [--threads 2]

A probe for issue 50's 4-bit item: float32 activations take the kernel's reference loop, bfloat16 ones its fast path.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neural.models import int8_linear as il  # noqa: E402

SHAPES = {"135M": [(576, 1728), (576, 3072), (1536, 576)], "0.5B": [(896, 1152), (896, 9728), (4864, 896)]}
GROUP = 32


def int4_pack(w: torch.Tensor, group: int = GROUP) -> tuple[torch.Tensor, torch.Tensor]:
    """(packed weight, scales and zeros [k / group, n, 2]) in the kernel's convention w = (q - 8) * scale + zero,
    q in 0..15 per group of ``group`` input columns (asymmetric: min..max)."""
    n, k = w.shape
    g = w.view(n, k // group, group)
    low, high = g.amin(-1, keepdim=True), g.amax(-1, keepdim=True)
    scale = ((high - low) / 15).clamp_min(1e-8)
    q = ((g - low) / scale).round().clamp(0, 15).to(torch.int32).view(n, k)
    zero = low + scale * 8
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 1)
    scales_zeros = torch.stack([scale.view(n, -1), zero.view(n, -1)], -1).transpose(0, 1).contiguous()
    return packed, scales_zeros


def best_us(f: Callable[[], object], reps: int = 200) -> float:
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        best = min(best, (time.perf_counter() - t) / reps)
    return best * 1e6


def rel_err(y: torch.Tensor, ref: torch.Tensor) -> float:
    return float((y.float() - ref).norm() / ref.norm())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    torch.set_num_threads(ap.parse_args().threads)
    torch.manual_seed(0)
    int4_mm = torch.ops.aten._weight_int4pack_mm_for_cpu
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"{torch.get_num_threads()} thread(s)")
    for model, shapes in SHAPES.items():
        for k, n in shapes:
            w = torch.randn(n, k) * 0.02
            p8 = il.prepack(il.qweight_pieces(*il.quantize_rows(w)))
            p4, sz = int4_pack(w)
            sz_bf16 = sz.bfloat16()
            for rows in (1, 5):
                x = torch.randn(rows, k)
                x_bf16 = x.bfloat16()
                ref = x @ w.T
                with torch.inference_mode():
                    e8 = rel_err(il.linear_residual(x, p8), ref)
                    e4 = rel_err(int4_mm(x_bf16, p4, GROUP, sz_bf16), ref)
                    t8 = best_us(lambda: il.linear_residual(x, p8))
                    t4 = best_us(lambda: int4_mm(x, p4, GROUP, sz), reps=5)
                    t4b = best_us(lambda: int4_mm(x_bf16, p4, GROUP, sz_bf16))
                print(f"{model} {k}->{n} rows {rows}: int8 {t8:.0f} us (err {e8:.4f}) | int4 float32 {t4:.0f} us, "
                      f"bfloat16 {t4b:.0f} us (err {e4:.4f}) -> int4/int8 time {t4b / t8:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
