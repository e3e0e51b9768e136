"""Batched fp32 CPU linears as oneDNN 1x1 convolutions over a weight copy reordered once into oneDNN's layout.

MKL's fp32 GEMM at the 4-64 rows of a batched decode step runs far below the machine's limits (bench/cpu_gemm.py:
2.2-3.8x the time of streaming the weights once at 8-16 rows on the 2-core AVX2 machine). oneDNN's brgemm 1x1
convolution over a weight reordered once into its blocked layout reads ``x`` in place (a row-major ``[rows, in]``
matrix is the channels-last image ``[1, in, 1, rows]``) and writes ``x W^T`` row-major: 16 concurrent requests
on the default model 21.6-24.3 s -> 18.4-20.8 s, identical greedy tokens (in-process A/B, 2026-11-30).

Its kernel picks the blocked layout from the problem shape, so a weight reordered for one width is the wrong
layout for some others (5, 6, 9, 10, 17 or 232+ columns on that machine), and oneDNN then reorders all of W on
every call, ~100x slower. Rows are therefore padded to 4 or a multiple of 8 columns, at most MAX_ROWS, and the
first call at each (shape, columns) checks the convolution against MKL's GEMM once: a width whose layout does
not fit (>= 4x MKL's time; a fitting one is ~1x) stays on MKL. Both paths compute the same dot products up to
float rounding, so the check decides speed only.
"""
from __future__ import annotations

from time import perf_counter

import torch

from neural.models.cpu_ops import linear_cpu, pad_rows

MAX_ROWS = 224  # beyond: prefill-sized GEMMs, where MKL is as fast and 232+ columns want another layout
PACKED_FOR_COLUMNS = 16  # the width the layout is chosen for: 4..224 columns fit it on the 2-core machine
MISFIT_RATIO = 4.0  # convolution time over MKL's at which a width's layout is judged a misfit

# (out, in, columns, threads) -> the reordered layout is what oneDNN's kernel wants at that width
_LAYOUT_FITS: dict[tuple[int, int, int, int], bool] = {}


def onednn_available() -> bool:
    """oneDNN (mkldnn) is compiled into this torch with the convolution ops used here."""
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_convolution_pointwise")


def memory_allows_copy(nbytes: int) -> bool:
    """A second copy of ``nbytes`` leaves at least as much memory available again (Linux MemAvailable; other
    systems are not checked): the prepacked weights must not push the process into swap or the OOM killer."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return 2 * nbytes <= int(line.split()[1]) * 1024
    except OSError:
        pass
    return True


def conv_columns(rows: int) -> int:
    """Rows rounded up to 4, or to a multiple of 8 above 4 (zero rows: no effect on the real rows' outputs)."""
    return 4 if rows <= 4 else -(-rows // 8) * 8


class PrepackedLinear:
    """The op of one fp32 ``Linear`` on CPU: oneDNN for 2..MAX_ROWS rows, ``cpu_ops.linear_cpu`` otherwise.

    Holds a second copy of the weight in oneDNN's blocked layout (the plain one stays: the one-row GEMV and
    prefill-sized GEMMs read it), so a model's linear weights take twice their memory.
    """

    def __init__(self, weight: torch.Tensor) -> None:
        self.weight = weight
        out_features, in_features = weight.shape
        self.blocked = torch.ops.mkldnn._reorder_convolution_weight(
            weight.detach()[:, :, None, None].contiguous(), [0, 0], [1, 1], [1, 1], 1,
            [1, in_features, 1, PACKED_FOR_COLUMNS],
        )

    def __call__(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        rows = x.shape[0] if x.dim() == 2 else 0
        if weight is not self.weight or not 2 <= rows <= MAX_ROWS or x.dtype != torch.float32:
            return linear_cpu(x, weight, bias)
        padded = pad_rows(x, conv_columns(rows))
        if not self._layout_fits(padded):
            return linear_cpu(x, weight, bias)  # MKL, at its own column widths
        y = self._convolve(padded)[:rows]
        return y if bias is None else y.add_(bias)

    def _convolve(self, x: torch.Tensor) -> torch.Tensor:
        """``x W^T`` for a contiguous ``[columns, in]`` x: read as a channels-last image, written as one."""
        image = x.t()[None, :, None, :]  # [1, in, 1, columns] with channels innermost: x's own memory
        out = torch.ops.mkldnn._convolution_pointwise(image, self.blocked, None, [0, 0], [1, 1], [1, 1], 1,
                                                      "none", [], "")
        return out[0, :, 0, :].t()  # [columns, out], contiguous (the output is channels-last too)

    def _layout_fits(self, x: torch.Tensor) -> bool:
        key = (*self.weight.shape, x.shape[0], torch.get_num_threads())
        fits = _LAYOUT_FITS.get(key)
        if fits is None:
            self._convolve(x)  # the first call at a shape builds oneDNN's kernel: not part of the timing
            start = perf_counter()
            self._convolve(x)
            conv = perf_counter() - start
            start = perf_counter()
            torch.mm(self.weight, x.t())
            gemm = perf_counter() - start
            fits = _LAYOUT_FITS[key] = conv < MISFIT_RATIO * gemm + 1e-4
        return fits
