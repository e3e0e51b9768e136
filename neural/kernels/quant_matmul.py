"""GGUF block-quantized weights (Q8_0, Q4_0, Q4_1): dequantization reference and a Triton dequant-matmul.

Packed layout (one GGUF block = 32 consecutive weights of a row, i.e. along in_features):
``qs`` int8 ``[N, K/32, 32]`` (Q8_0) or uint8 ``[N, K/32, 16]`` (Q4: byte j holds element j in its low
nibble and element j+16 in its high nibble); ``d`` (scale) and ``m`` (Q4_1 min) fp16 ``[N, K/32]``.
Values: Q8_0 ``q*d``; Q4_0 ``(q-8)*d``; Q4_1 ``q*d + m`` — the same float32 operations as ``gguf.quants``.
"""
import torch

from neural.kernels.backend import tl, triton, upcast_in_kernel

QTYPES = ("Q8_0", "Q4_0", "Q4_1")
_QTYPE_ID = {name: i for i, name in enumerate(QTYPES)}


def dequantize_ref(
    qtype: str, qs: torch.Tensor, d: torch.Tensor, m: torch.Tensor | None, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Packed rows -> dense ``[N, K]`` (math in float32, then cast to ``dtype``)."""
    scale = d.float().unsqueeze(-1)
    if qtype == "Q8_0":
        w = qs.float() * scale
    else:
        q = torch.cat([qs & 0x0F, qs >> 4], dim=-1).float()
        if qtype == "Q4_0":
            w = (q - 8.0) * scale
        else:
            assert m is not None  # Q4_1 blocks carry a minimum
            w = q * scale + m.float().unsqueeze(-1)
    return w.reshape(qs.shape[0], -1).to(dtype)


@triton.jit
def _dequant_matmul_kernel(
    x_ptr, qs_ptr, d_ptr, m_ptr, bias_ptr, out_ptr, M, N, K,
    stride_xm, stride_om,
    QTYPE: tl.constexpr, HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # out[M, N] = x[M, K] @ W[N, K]^T with W unpacked tile by tile in registers: weights cross memory packed
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mmask = rm < M
    nmask = rn < N
    n_blocks = K // 32
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        kmask = rk < K
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=mmask[:, None] & kmask[None, :], other=0.0)
        wmask = nmask[:, None] & kmask[None, :]
        blk = rk // 32
        scale = tl.load(d_ptr + rn[:, None] * n_blocks + blk[None, :], mask=wmask, other=0.0).to(tl.float32)
        if QTYPE == 0:  # Q8_0: qs is effectively an int8 [N, K] matrix
            q = tl.load(qs_ptr + rn[:, None] * K + rk[None, :], mask=wmask, other=0).to(tl.float32)
            w = q * scale
        else:
            j = rk % 32
            byte = tl.load(qs_ptr + rn[:, None] * (K // 2) + (blk * 16 + j % 16)[None, :], mask=wmask, other=0)
            q = ((byte >> ((j // 16) * 4)[None, :]) & 0x0F).to(tl.float32)
            if QTYPE == 1:
                w = (q - 8.0) * scale
            else:
                mn = tl.load(m_ptr + rn[:, None] * n_blocks + blk[None, :], mask=wmask, other=0.0).to(tl.float32)
                w = q * scale + mn
        if UPCAST:
            acc += tl.dot(x.to(tl.float32), tl.trans(w), input_precision="ieee")
        else:
            acc += tl.dot(x, tl.trans(w.to(x.dtype)))
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=nmask, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=mmask[:, None] & nmask[None, :])


def dequant_matmul_triton(
    x: torch.Tensor,
    qtype: str,
    qs: torch.Tensor,
    d: torch.Tensor,
    m: torch.Tensor | None,
    bias: torch.Tensor | None = None,
    *,
    block_m: int = 16,
    block_n: int = 64,
    block_k: int = 64,
) -> torch.Tensor:
    """``x [..., K] @ W^T (+ bias)`` with ``W [N, K]`` given packed; output in ``x.dtype``."""
    n = qs.shape[0]
    k = x.shape[-1]
    x2 = x.reshape(-1, k)
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    out = torch.empty(x2.shape[0], n, dtype=x.dtype, device=x.device)
    if x2.shape[0]:
        grid = (triton.cdiv(x2.shape[0], block_m), triton.cdiv(n, block_n))
        _dequant_matmul_kernel[grid](
            x2, qs, d, m if m is not None else d, bias if bias is not None else d, out, x2.shape[0], n, k,
            x2.stride(0), out.stride(0),
            QTYPE=_QTYPE_ID[qtype], HAS_BIAS=bias is not None, UPCAST=upcast_in_kernel(x.dtype),
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        )
    return out.view(*x.shape[:-1], n)
