"""What this CPU gives a decode step: memory read bandwidth and the weight GEMMs' throughput per batch size.

A decode step of the default model streams its 538 MB of fp32 weights (thirty layers' four projections + the
LM head) once. This prints, on the model's own weight shapes (distinct random matrices, so nothing stays in
cache between layers), the time of one step's GEMMs at each row count through the engine's CPU op
(``cpu_ops.linear_cpu``) and through plain ``F.linear``, the GFLOP/s that is, and the bandwidth floor (the
weights' bytes over the measured read bandwidth, or the FLOPs over MKL's own throughput at 256 rows, whichever is
larger: the time a kernel that streams the weights once at full arithmetic speed would take). bench/decode.py's ceiling line is these GEMM times summed
over the steps the engine ran.

    .venv/bin/python bench/cpu_gemm.py [--threads N (default: all cores)] [--rows 1 2 4 8 16 32 64 128]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from neural.models.cpu_ops import linear_cpu

# SmolLM2-135M: hidden 576, 9 query / 3 KV heads of 64, intermediate 1536, 30 layers, vocabulary 49152
LAYER_SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536)]  # qkv, o, gate_up, down (out, in)
LAYERS, VOCAB, HIDDEN = 30, 49152, 576


def read_bandwidth(megabytes: int = 512, repeat: int = 5) -> float:
    """GB/s of a summing pass over a tensor far larger than the caches (median of ``repeat``)."""
    data = torch.ones(megabytes * 2**20 // 4)
    data.sum()  # first touch
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        data.sum()
        times.append(time.perf_counter() - t0)
    return data.numel() * 4 / statistics.median(times) / 1e9


def step_weights() -> list[torch.Tensor]:
    """One decode step's weight matrices, each its own allocation (real layers do not share cache lines)."""
    weights = [torch.randn(out, inp) * 0.02 for _ in range(LAYERS) for out, inp in LAYER_SHAPES]
    return weights + [torch.randn(VOCAB, HIDDEN) * 0.02]


def step_gemm_seconds(op, weights: list[torch.Tensor], rows: int, repeat: int) -> float:
    """Median time of one step's GEMMs at ``rows`` rows through ``op(x, W)``."""
    inputs = [torch.randn(rows, w.shape[1]) for w in weights]
    times = []
    with torch.inference_mode():
        for _ in range(repeat):
            t0 = time.perf_counter()
            for w, x in zip(weights, inputs):
                op(x, w)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--rows", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    weights = step_weights()
    weight_bytes = sum(w.numel() for w in weights) * 4
    flops_per_row = 2 * sum(w.numel() for w in weights)
    bandwidth = read_bandwidth()
    stream_ms = weight_bytes / bandwidth / 1e6
    peak = 256 * flops_per_row / step_gemm_seconds(F.linear, weights, 256, 3) / 1e9  # GFLOP/s, compute-bound
    print(f"threads {args.threads}; weights per step {weight_bytes / 1e6:.0f} MB; read bandwidth {bandwidth:.1f} GB/s "
          f"-> streaming floor {stream_ms:.0f} ms per step; MKL at 256 rows {peak:.0f} GFLOP/s")
    print(f"{'rows':>5} {'engine op ms':>13} {'GFLOP/s':>8} {'F.linear ms':>12} {'GFLOP/s':>8} {'engine / floor':>15}")
    for rows in args.rows:
        ours = step_gemm_seconds(linear_cpu, weights, rows, args.repeat)
        plain = step_gemm_seconds(F.linear, weights, rows, args.repeat)
        gflops = rows * flops_per_row / 1e9
        floor_ms = max(stream_ms, gflops / peak * 1e3)
        print(f"{rows:>5} {ours * 1e3:>13.1f} {gflops / ours:>8.1f} {plain * 1e3:>12.1f} {gflops / plain:>8.1f} "
              f"{ours * 1e3 / floor_ms:>14.2f}x")


if __name__ == "__main__":
    main()
