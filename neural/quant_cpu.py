"""CPU matmul against packed GGUF weights: unpack into a reused per-thread scratch, block offsets factored out.

Per row chunk of W, with ``x`` of ``M`` rows and blocks of 32 along K:

- Q8_0 ``w = q*d``: the chunk is dequantized as ``float(q) * d`` into the scratch, then one GEMM.
- Q4_1 ``w = q*d + m`` and Q4_0 ``w = (q-8)*d``: only ``q*d`` is built; the offset term is
  ``sum_b m[n,b] * sum_j x[b,j]``, a GEMM with the K/32 block sums of ``x`` (``m = -8d`` for Q4_0). The
  nibbles are unpacked eight bytes at a time (int64 masks) into a ``[rows, 2, K/32, 16]`` layout — all low
  nibbles, then all high ones — so ``x``'s columns are permuted to match instead of interleaving W.

The scratch is reused across calls and layers (no per-step allocation of a multi-MB weight, which on CPU
page-faults every time) and bounded by ``CHUNK_ELEMENTS``; nothing dense is kept between calls.
"""
from __future__ import annotations

import threading

import torch

CHUNK_ELEMENTS = 1 << 22  # weights dequantized at a time: 16 MiB of float32 scratch
_LOW_NIBBLES = 0x0F0F0F0F0F0F0F0F
_scratch = threading.local()  # per thread: two engines in two threads must not share one buffer


def _buffers(numel: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(uint8, float32) scratch of at least ``numel`` elements, grown on demand and then kept."""
    key = str(device)
    bufs = getattr(_scratch, "bufs", None)
    if bufs is None:
        bufs = _scratch.bufs = {}
    u8, f32 = bufs.get(key, (None, None))
    if u8 is None or u8.numel() < numel:
        with torch.inference_mode(False):  # an inference tensor could not be written outside inference mode
            u8 = torch.empty(numel, dtype=torch.uint8, device=device)
            f32 = torch.empty(numel, dtype=torch.float32, device=device)
        bufs[key] = (u8, f32)
    return u8, f32


def _q4_chunk(qs: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """``q * d`` for Q4 rows ``qs [n, B, 16]`` in the [n, 2, B, 16] (low nibbles, high nibbles) column order."""
    n, blocks = qs.shape[0], qs.shape[1]
    u8, f32 = _buffers(n * blocks * 32, qs.device)
    q = u8[: n * blocks * 32].view(n, 2, blocks * 16)
    words = qs.reshape(n, blocks * 16).view(torch.int64)  # 16 bytes per block: 2 words
    out = q.view(n, 2 * blocks * 16).view(torch.int64).view(n, 2, blocks * 2)
    torch.bitwise_and(words, _LOW_NIBBLES, out=out[:, 0])
    torch.bitwise_right_shift(words, 4, out=out[:, 1])
    out[:, 1].bitwise_and_(_LOW_NIBBLES)
    w = f32[: n * blocks * 32].view(n, 2, blocks, 16)
    w.copy_(q.view(n, 2, blocks, 16))
    return w.mul_(d.float().view(n, 1, blocks, 1)).view(n, blocks * 32)


def _q8_chunk(qs: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    n, blocks = qs.shape[0], qs.shape[1]
    _, f32 = _buffers(n * blocks * 32, qs.device)
    w = f32[: n * blocks * 32].view(n, blocks, 32)
    w.copy_(qs)
    return w.mul_(d.float().unsqueeze(-1)).view(n, blocks * 32)


def packed_linear_cpu(
    x: torch.Tensor, qtype: str, qs: torch.Tensor, d: torch.Tensor, m: torch.Tensor | None,
    bias: torch.Tensor | None = None,
) -> torch.Tensor:
    """``x [..., K] @ W^T (+ bias)`` for float32 ``x`` and a packed ``W [N, K]`` (layout of neural.quant)."""
    n_out, blocks = qs.shape[0], qs.shape[1]
    k = blocks * 32
    x2 = x.reshape(-1, k)
    xb = x2.reshape(-1, blocks, 32)
    if qtype == "Q8_0":
        xw = x2
    else:  # permute x's columns to the unpacked nibble order; block sums carry the offset term
        xw = xb.view(-1, blocks, 2, 16).transpose(1, 2).reshape(-1, k)
        xs = xb.sum(-1)
        if qtype == "Q4_1":
            assert m is not None  # Q4_1 blocks carry a minimum
            offset = m.float()
        else:
            offset = d.float() * -8.0
    rows = max(1, CHUNK_ELEMENTS // k)
    parts = []
    for r0 in range(0, n_out, rows):  # each chunk's GEMM runs before the next one reuses the scratch
        sl = slice(r0, r0 + rows)
        if qtype == "Q8_0":
            parts.append(xw @ _q8_chunk(qs[sl], d[sl]).t())
        else:
            parts.append(torch.addmm(xs @ offset[sl].t(), xw, _q4_chunk(qs[sl], d[sl]).t()))
    out = parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)
    if bias is not None:
        out += bias.to(x.dtype)
    return out.view(*x.shape[:-1], n_out)
