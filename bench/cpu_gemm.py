"""What this CPU gives a decode step: memory read bandwidth and the weight GEMMs' throughput per batch size.

A decode step of the default model streams its 538 MB of fp32 weights (thirty layers' four projections + the
LM head) once. This prints, on the model's own weight shapes (distinct random matrices, so nothing stays in
cache between layers), the time of one step's GEMMs at each row count through the engine's two CPU ops
(``onednn_linear.PrepackedLinear``, oneDNN over prepacked weights, the default; ``cpu_ops.linear_cpu``, MKL)
and through plain ``F.linear``; the GFLOP/s that is; and the floor: the weights' bytes over the measured read
bandwidth or the FLOPs over MKL's own throughput at 256 rows, whichever is larger (a kernel that streams the
weights once at full arithmetic speed). bench/decode.py's ceiling line sums the engine's GEMM times over the
steps it ran.

    .venv/bin/python bench/cpu_gemm.py [--threads N (default: all cores)] [--rows 1 2 4 8 16 32 64 128]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from neural.models.cpu_ops import linear_cpu
from neural.models.onednn_linear import PrepackedLinear, onednn_available

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


def step_gemm_seconds(ops, weights: list[torch.Tensor], rows: int, repeat: int) -> float:
    """Median time of one step's GEMMs at ``rows`` rows, ``ops[i](x, W_i)`` (one op for all, or one per weight)."""
    ops = ops if isinstance(ops, list) else [ops] * len(weights)
    inputs = [torch.randn(rows, w.shape[1]) for w in weights]
    times = []
    with torch.inference_mode():
        for op, w, x in zip(ops, weights, inputs):  # warm-up: oneDNN builds its kernels on first use
            op(x, w)
        for _ in range(repeat):
            t0 = time.perf_counter()
            for op, w, x in zip(ops, weights, inputs):
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
    prepacked = [PrepackedLinear(w) for w in weights] if onednn_available() else None
    print(f"{'rows':>5} {'floor ms':>9} {'oneDNN ms':>10} {'GFLOP/s':>8} {'/ floor':>8} {'MKL op ms':>10} {'GFLOP/s':>8} "
          f"{'/ floor':>8} {'F.linear ms':>12} {'GFLOP/s':>8}")
    for rows in args.rows:
        gflops = rows * flops_per_row / 1e9
        floor = max(stream_ms, gflops / peak * 1e3) / 1e3
        cells = []
        for op in ([prepacked] if prepacked else []) + [linear_cpu]:
            t = step_gemm_seconds(op, weights, rows, args.repeat)
            cells.append(f"{t * 1e3:>10.1f} {gflops / t:>8.1f} {t / floor:>7.2f}x")
        if not prepacked:
            cells.insert(0, f"{'-':>10} {'-':>8} {'-':>8}")
        plain = step_gemm_seconds(F.linear, weights, rows, args.repeat)
        print(f"{rows:>5} {floor * 1e3:>9.1f} {' '.join(cells)} {plain * 1e3:>12.1f} {gflops / plain:>8.1f}")


if __name__ == "__main__":
    main()
