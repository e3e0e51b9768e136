"""Int8Linear / Int8Embedding: int8 weights (per-output-channel scales) through PyTorch's fbgemm kernels.

fbgemm quantizes a call's activations to uint8 and runs its int8 GEMM against the prepacked weight: on the
2-core machine 3-6x faster than fp32 at Qwen2.5-0.5B shapes, 1 and 16 rows (#18). On an AVX2-only CPU fbgemm
sums pairs of u8*s8 products in int16, which full 8-bit activations times full 8-bit weights overflow (the
0.5B model then emitted garbage); AVX512-VNNI sums in int32. Both ways below stay inside int16, so a model
quantized on one CPU computes the same on another:
- two passes (``linear_residual``, quantization="int8"): 8-bit weights, activations at 129 levels, and what
  that rounding lost goes through the same call as more rows, ~14-bit activations for one read of the weight;
  perplexity +0.25 % (Qwen2.5-0.5B) and +0.27 % (SmolLM2-135M) over fp32, at up to twice the GEMM work where
  a batch is compute-bound (prefill, many streams).
- one pass (``linear_one_pass``, quantization="int8-fast"): 7-bit weights (FAST_QMAX) and full 8-bit
  activations, the fastest; +0.9 % and +2.9 % with SmoothQuant, every projection int8 (8-bit weights and
  7-bit activations, the mode's first form, measured the same way: +2.2 % and +4.8 %).
The quantized-tensor constructors are deprecated in PyTorch (their warning is silenced here); the kernels are
PyTorch's own maintained CPU int8 path.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Iterator, Sequence

import torch
from torch import nn

# fbgemm's int8 linear with the activation scale given by the caller: x is quantized as round(x / scale) + zero
# point into uint8 and the output is float32. Called as the C++ operator itself: through torch.ops a call costs
# ~58 us of Python before the kernel runs (9 us this way, one thread, 64x64): the op overload walks its arguments
# looking for fake script objects, and the torch-function check asks the packed weight (a ScriptObject) for
# ``__torch_function__``, which it answers with a C++ exception. py-spy put that at a third of a one-stream int8
# decode step of SmolLM2-135M (121 projections a step); our arguments are never fake objects nor torch-function
# subclasses, so both are skipped.
_LINEAR_GIVEN_SCALE = getattr(torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32.default, "_op",
                              torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32.default)
# Activations quantize to round(x / scale) in [-64, 64] around zero point 64: uint8 0..128, whose u8*s8 pair
# sums (2 * 128 * 127) still fit the int16 that fbgemm's AVX2 path accumulates them in (see the module docstring).
ACT_LEVELS = 64
ACT_ZERO = 64
# The residual row holds what the first row's rounding lost ([-0.5, 0.5] steps), magnified to [-63.5, 63.5] steps
RESIDUAL_GAIN = 127.0


def linear_residual(x: torch.Tensor, pieces: Sequence) -> torch.Tensor:
    """``x @ W^T`` with ~14-bit activations for the weight read of one int8 call: each row of x is quantized
    on its own symmetric grid (absmax -> 64 steps), and what that rounding lost goes through the same call as a
    second block of rows, magnified 127x, so that one read of the weight serves both. 7-bit activations cost
    SmolLM2-135M +3.8 % perplexity over fp32; these cost +0.3 % (bench/RESULTS.md, issue 18). x: 2-D float32;
    ``pieces``: the weight's packed row pieces (prepack), whose outputs are concatenated; x is quantized once.

    One arithmetic for one row and many: a row's result never depends on the rows beside it, so a speculative
    verify step's k + 1 rows score bit for bit what k + 1 one-row decode steps score (greedy output identical).
    The one-row special case this replaced (the kernel quantizing with the row's scale itself) was ~3 us a call
    faster at SmolLM2-135M shapes and rounded near-ties differently from the batched rows."""
    n = x.shape[0]
    with torch._C.DisableTorchFunctionSubclass():
        scale = _rows_absmax(x).mul_(1.0 / ACT_LEVELS)
        steps = x / scale
        kept = steps.round()  # as the kernel rounds (to nearest); given rounded, its own rounding changes nothing
        lost = steps.sub_(kept).mul_(_GAIN)
        y = _given_scale(torch.cat((kept, lost)), 1.0, ACT_ZERO, pieces)
        if n == 1:
            return torch.mm(_COMBINE, y).mul_(scale)
        return torch.mm(_COMBINE, y.view(2, -1)).view(n, -1).mul_(scale)


def _rows_absmax(x: torch.Tensor) -> torch.Tensor:
    """Each row's largest magnitude ``[n, 1]``, never 0: abs().amax, not vector_norm(inf), same values, 8 vs 117 us
    at 16 x 4864 (vector_norm was a tenth of a 16-stream int8 step of the 0.5B)."""
    return x.abs().amax(dim=1, keepdim=True).clamp_min_(1e-30)


def _given_scale(rows: torch.Tensor, scale: float, zero: int, pieces: Sequence) -> torch.Tensor:
    if len(pieces) == 1:
        return _LINEAR_GIVEN_SCALE(rows, scale, zero, pieces[0])
    return torch.cat([_LINEAR_GIVEN_SCALE(rows, scale, zero, p) for p in pieces], dim=1)


_COMBINE = torch.tensor([[1.0, 1.0 / RESIDUAL_GAIN]])
_GAIN = torch.tensor(RESIDUAL_GAIN)


def linear_one_pass(x: torch.Tensor, pieces: Sequence) -> torch.Tensor:
    """``x @ W^T`` with 8-bit activations against 7-bit weights (quantize_rows(.., FAST_QMAX)): each row on its
    own grid (absmax -> 127 steps around zero point 128), so one attention-sink token's 100x activations do not
    crush the others; one arithmetic for one row and many, as linear_residual. x: 2-D contiguous float32;
    ``pieces`` as for linear_residual."""
    with torch._C.DisableTorchFunctionSubclass():
        row_max = _rows_absmax(x)
        return _given_scale(x / row_max, 1.0 / FAST_LEVELS, FAST_ZERO, pieces).mul_(row_max)


# One pass: activations over the whole uint8 range, weights at 7 bits, so that 2 * 255 * 63 = 32130 still fits
# fbgemm's int16 pair sums (module docstring)
FAST_LEVELS, FAST_ZERO, FAST_QMAX = 127, 128, 63


QMAX = 127  # symmetric int8: [-127, 127], zero point 0 (fbgemm's per-channel weights are symmetric)
# fbgemm's prepack time grows faster than the rows: Qwen2.5-0.5B's 151936-row LM head took 6.7 s in one piece,
# 2.5 s in 32k-row pieces and 1.8 s in 8k-row ones (2-core machine, loaded). Wider weights are packed in pieces
# whose outputs are concatenated; each piece re-quantizes the activations, negligible next to its GEMM.
PACK_ROWS = 16384


def weight_qmax(residual: bool) -> int:
    """The weights' range for an activation mode: two passes keep 8 bits, one pass needs 7 (FAST_QMAX)."""
    return QMAX if residual else FAST_QMAX


def quantize_rows(weight: torch.Tensor, qmax: int = QMAX) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 [out, in], float32 scale [out]) with ``weight ~= q * scale[:, None]``: per-row absmax / ``qmax``
    (QMAX for two-pass activations, FAST_QMAX for one pass)."""
    w = weight.detach().float()
    scale = (w.abs().amax(dim=1) / qmax).clamp_min(1e-12)
    with _quiet():
        q = torch.quantize_per_channel(w, scale.double(), torch.zeros(w.shape[0], dtype=torch.long), 0, torch.qint8)
    return q.int_repr(), scale


def qweight_pieces(q: torch.Tensor, scale: torch.Tensor) -> list[torch.Tensor]:
    """fbgemm's input: per-channel quantized tensors of at most PACK_ROWS rows (call from one thread at a time:
    silencing the deprecation warning swaps the process-wide warning filters)."""
    with _quiet():
        return [torch._make_per_channel_quantized_tensor(q[i : i + PACK_ROWS], scale[i : i + PACK_ROWS].double(),
                                                         torch.zeros(min(PACK_ROWS, q.shape[0] - i), dtype=torch.long), 0)
                for i in range(0, q.shape[0], PACK_ROWS)]


def prepack(pieces: list[torch.Tensor]) -> list:
    """fbgemm's packed weights (slow, warns nothing, releases the GIL: safe to run in worker threads)."""
    return [torch.ops.quantized.linear_prepack(piece, None) for piece in pieces]


@contextmanager
def _quiet() -> Iterator[None]:
    # creating a quantized tensor warns that quantized tensors are deprecated (their kernels are not)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


class Int8Linear(nn.Module):
    """``x @ W^T + b`` with W held only in fbgemm's prepacked int8 layout (no float copy). Takes 2-D or
    N-D float inputs; computes in float32 and returns x's dtype."""

    # the prepacked weight is opaque and large; the engine never trains or moves it, so it is no parameter
    def __init__(self, q: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None = None,
                 packed: list | None = None, residual: bool = True) -> None:
        """``packed``: prepack(qweight_pieces(q, scale)) when the caller made it already (in a worker thread).
        ``residual``: activations in two passes (linear_residual, ~14 bits) rather than one (7 bits)."""
        super().__init__()
        self.residual = residual
        if q.dtype != torch.int8 or q.dim() != 2 or scale.shape != (q.shape[0],):
            raise ValueError(f"Int8Linear needs int8 [out, in] and [out] scales, got {q.dtype} {tuple(q.shape)}, "
                             f"{tuple(scale.shape)}")
        self.out_features, self.in_features = q.shape
        # added after the rescale; an own copy, as Int8Embedding's: a view would keep the cache file mapped
        self.bias = None if bias is None else bias.detach().float().clone()
        self.packed = packed if packed is not None else prepack(qweight_pieces(q, scale))

    @classmethod
    def from_float(cls, weight: torch.Tensor, bias: torch.Tensor | None = None, residual: bool = True) -> "Int8Linear":
        q, scale = quantize_rows(weight, weight_qmax(residual))
        return cls(q, scale, bias, residual=residual)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2 and x.shape[0] == 1 and x.dtype == torch.float32 and x.shape[1] == self.in_features \
                and x.is_contiguous():
            # one decode row: the general path's reshape/contiguous/cat/view/to are no-ops that still cost a
            # dispatch each (121 projections a step, see cpu_ops.rotate_qk_cpu on what an op costs there)
            y = linear_residual(x, self.packed) if self.residual else linear_one_pass(x, self.packed)
            return y if self.bias is None else y.add_(self.bias)
        if x.shape[-1] != self.in_features:
            raise ValueError(f"Int8Linear: input has {x.shape[-1]} features, expected {self.in_features}")
        x2 = x.reshape(-1, self.in_features)
        x2 = (x2 if x2.dtype == torch.float32 else x2.float()).contiguous()
        y = (linear_residual if self.residual else linear_one_pass)(x2, self.packed)  # quantized once for all pieces
        if self.bias is not None:
            y.add_(self.bias)
        return y.view(*x.shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        acts = "two-pass activations" if self.residual else "7-bit weights, 8-bit activations"
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"int8, {acts}")


EMBEDDING_GROUP = 32  # columns per embedding scale: one scale per row cost SmolLM2 +2 % perplexity on its own


def quantize_groups(weight: torch.Tensor, group: int = EMBEDDING_GROUP) -> tuple[torch.Tensor, torch.Tensor]:
    """(int8 [rows, cols], float32 scale [rows, cols / group]): symmetric absmax / 127 per run of ``group``
    columns (one per row when ``cols`` is not a multiple of ``group``)."""
    w = weight.detach().float()
    g = group if w.shape[1] % group == 0 else w.shape[1]
    blocks = w.view(w.shape[0], -1, g)
    scale = (blocks.abs().amax(dim=2) / QMAX).clamp_min(1e-12)
    q = torch.round(blocks / scale[:, :, None]).clamp_(-QMAX, QMAX).to(torch.int8)
    return q.view_as(w), scale


class Int8Embedding(nn.Module):
    """Embedding rows stored int8 with a scale per group of columns (quantize_groups); a lookup dequantizes
    only the rows it reads."""

    q: torch.Tensor  # buffers (register_buffer), declared for the type checker
    scale: torch.Tensor

    def __init__(self, q: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = q.shape
        if scale.dim() == 1:
            scale = scale[:, None]
        # own copies: a cached state's tensors are views of a memory-mapped file that would otherwise stay mapped
        self.register_buffer("q", q.clone(), persistent=False)
        self.register_buffer("scale", scale.float().clone(), persistent=False)
        self.compute_dtype = dtype

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        flat = ids.reshape(-1)
        groups = self.scale.shape[1]
        rows = self.q.index_select(0, flat).float().view(len(flat), groups, -1)
        rows = rows * self.scale.index_select(0, flat)[:, :, None]
        return rows.to(self.compute_dtype).view(*ids.shape, self.embedding_dim)
