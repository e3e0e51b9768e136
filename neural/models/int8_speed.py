"""Which projection shapes run faster int8 (models.int8_linear) than fp32 on this machine, measured once.

fbgemm's int8 kernel wins big at 0.5B shapes but not everywhere: the issue measured a 1536x576 projection at
0.8x fp32's speed at one row (2.8x at 16). So each distinct weight shape is timed both ways, at 1 row (one
decode stream) and 16 rows (a continuous batch), against the fp32 path the engine would really take
(cpu_ops.linear_cpu, and oneDNN's prepacked convolution at 16 rows when it is on), each call reading its
weight from memory as a decode step does (copies of the weight that overflow the cache). The verdicts are kept
per machine (CPU model, cores, ISA, torch version) and mode in the load cache folder, so a start measures
nothing twice.
"""
from __future__ import annotations

import hashlib
import math
import os
import platform
import time
from functools import partial
from pathlib import Path
from typing import Callable

import torch

from neural.loader.cache import CacheDir, load_cache_root
from neural.models.cpu_ops import linear_cpu
from neural.models.int8_linear import Int8Linear
from neural.models.onednn_linear import PrepackedLinear, onednn_available

MEASURE_ROWS = (1, 16)
MAX_MEASURED_OUT = 8192  # a 152k-row LM head is timed on a slice: time per output row is what is compared
REPEAT = 25  # best of: on a shared 2-core machine a single call can stall ~8 ms behind another process
SLOWER_OK = 1.05  # int8 kept unless clearly slower: its weights take a quarter of the memory
# Timed on one thread. With two, an op waits at each parallel region for a thread the OS has descheduled, and on
# the shared 2-core machine (load average 3-5) that made int8 (more parallel regions per call: the activation
# quantization, the GEMM, the rescale) measure 2-5x slower than fp32 at shapes where it runs 2-4x faster on the
# quiet machine. One-thread ratios are stable under load and gave the same verdicts as quiet two-thread ones
# (Qwen2.5-0.5B: 9728x896 int8 at 0.13/0.39 of fp32's time on 1 thread, 0.23/0.42 on 2; 1152x896 1.32/0.67
# against 1.39/0.78; 1 and 16 rows; 2026-12-01).
MEASURE_THREADS = 1
COLD_BYTES = 96 << 20  # fp32 bytes of weight copies a shape is timed over: more than this CPU's caches hold
MAX_COPIES = 64


def machine_key() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    ident = f"{cpu}|{os.cpu_count()}|{torch.backends.cpu.get_cpu_capability()}|{torch.__version__}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def _best(fns: list, x: torch.Tensor) -> float:
    """Best time of one call, the calls going round ``fns`` (one per weight copy)."""
    for fn in fns:
        fn(x)  # first call builds kernels / layouts
    times = []
    for i in range(max(REPEAT, len(fns))):
        start = time.perf_counter()
        fns[i % len(fns)](x)
        times.append(time.perf_counter() - start)
    return min(times)


@torch.inference_mode()
def time_shape(out_features: int, in_features: int, prepack: bool, residual: bool = True) -> dict[str, float]:
    """Seconds per call, fp32 and int8 (two-pass activations or one pass: ``residual``), at each of
    MEASURE_ROWS (best of REPEAT, the two sides alternating), on one thread: see MEASURE_THREADS."""
    threads = torch.get_num_threads()
    torch.set_num_threads(MEASURE_THREADS)
    try:
        return _time_shape(out_features, in_features, prepack, residual)
    finally:
        torch.set_num_threads(threads)


def _time_shape(out_features: int, in_features: int, prepack: bool, residual: bool) -> dict[str, float]:
    gen = torch.Generator().manual_seed(0)
    out_rows = min(out_features, MAX_MEASURED_OUT)
    # In a decode step each weight is read once, from memory, between 120 others: a weight timed again and
    # again sits in the cache, where a small fp32 one looks faster than it is (SmolLM2-135M's 576x576 o_proj:
    # 1.11x int8's time measured warm, 0.35x cold; a decode step with it int8 was no slower, bench/RESULTS.md).
    # So the calls go round copies of the weight that together overflow the cache.
    copies = max(1, min(MAX_COPIES, math.ceil(COLD_BYTES / (out_rows * in_features * 4))))
    weights = [torch.randn(out_rows, in_features, generator=gen) * 0.02 for _ in range(copies)]
    int8 = [Int8Linear.from_float(w, residual=residual) for w in weights]
    packed = [PrepackedLinear(w) for w in weights] if prepack else None
    result: dict[str, float] = {}
    for rows in MEASURE_ROWS:
        x = torch.randn(rows, in_features, generator=gen)
        fp32_ops: list[Callable[[torch.Tensor], torch.Tensor]]
        if packed is not None and rows > 1:
            fp32_ops = [partial(op, weight=w) for op, w in zip(packed, weights)]
        else:
            fp32_ops = [partial(linear_cpu, weight=w) for w in weights]
        fp32, q = [], []
        for _ in range(3):  # alternate: the shared machine's load drifts between the two sides
            fp32.append(_best(fp32_ops, x))
            q.append(_best(int8, x))
        result[f"fp32@{rows}"], result[f"int8@{rows}"] = min(fp32), min(q)
    return result


def verdict(times: dict[str, float]) -> tuple[bool, str]:
    """(int8 wins, why): int8 unless the geometric mean of its time ratios over MEASURE_ROWS is > SLOWER_OK."""
    ratios = [times[f"int8@{r}"] / times[f"fp32@{r}"] for r in MEASURE_ROWS]
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    detail = ", ".join(f"{r:.2f}x fp32's time at {rows} row{'s' if rows > 1 else ''}"
                       for r, rows in zip(ratios, MEASURE_ROWS))
    return mean <= SLOWER_OK, f"int8 takes {detail}"


def int8_verdicts(shapes: set[tuple[int, int]], prepack: bool, root: Path | None = None,
                  residual: bool = True) -> dict[tuple[int, int], tuple[bool, str]]:
    """shape -> (int8 wins, why) for each (out, in) shape, from the per-machine record or measured now, for
    two-pass activations (``residual``) or one pass."""
    cache = CacheDir((root if root is not None else load_cache_root()) / "int8-speed")
    mode = "-two-pass" if residual else "-one-pass-w7a8"  # a new name when what a mode times changes
    name = f"{machine_key()}-{'prepack' if prepack and onednn_available() else 'mkl'}{mode}-cold.json"
    record = cache.read_json(name) or {"shapes": {}}
    measured = False
    for out_f, in_f in sorted(shapes):
        key = f"{out_f}x{in_f}"
        if key not in record["shapes"]:
            record["shapes"][key] = time_shape(out_f, in_f, prepack and onednn_available(), residual)
            measured = True
    if measured:
        cache.write_json(name, {"shapes": record["shapes"], "threads": MEASURE_THREADS, "torch": torch.__version__})
    return {s: verdict(record["shapes"][f"{s[0]}x{s[1]}"]) for s in shapes}
