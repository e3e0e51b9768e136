"""Chooses the backend of each operator (Triton kernel or PyTorch reference) and guards the Triton import."""
import os
import types

import torch

try:  # Triton is optional: a machine without it (or without a wheel for it) runs the references.
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover - exercised only where triton is absent
    HAS_TRITON = False
    # Stand-ins so kernel definitions still parse: @triton.jit becomes identity, annotations resolve.
    triton = types.SimpleNamespace(jit=lambda fn=None, **_: fn if fn is not None else (lambda f: f),
                                   cdiv=lambda a, b: -(-a // b), next_power_of_2=lambda n: 1 << (n - 1).bit_length())
    tl = types.SimpleNamespace(constexpr=int)

ENV_VAR = "VERIRAG_KERNELS"
_CHOICES = ("auto", "triton", "reference")


class KernelBackendError(RuntimeError):
    """The requested kernel backend cannot run here (e.g. VERIRAG_KERNELS=triton without Triton)."""


def requested_backend() -> str:
    """The value of VERIRAG_KERNELS: ``auto`` (default), ``triton`` or ``reference``."""
    value = os.environ.get(ENV_VAR, "auto").strip().lower() or "auto"
    if value not in _CHOICES:
        raise KernelBackendError(f"{ENV_VAR}={value!r} is not one of {', '.join(_CHOICES)}")
    return value


def interpreting() -> bool:
    """True when Triton runs its CPU interpreter (TRITON_INTERPRET=1, read when kernels were defined)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def use_triton(x: torch.Tensor) -> bool:
    """CUDA tensors take the Triton kernel, CPU tensors the reference, unless VERIRAG_KERNELS forces one."""
    backend = requested_backend()
    if backend == "reference":
        return False
    if backend == "triton":
        if not HAS_TRITON:
            raise KernelBackendError(f"{ENV_VAR}=triton but triton is not installed")
        if not x.is_cuda and not interpreting():
            raise KernelBackendError(
                f"{ENV_VAR}=triton on CPU tensors needs TRITON_INTERPRET=1 set before neural.kernels is imported"
            )
        return True
    return HAS_TRITON and x.is_cuda


def upcast_in_kernel(dtype: torch.dtype) -> bool:
    """Whether kernels must do their math (and tl.dot) in fp32 for this input dtype.

    fp32 inputs always (with ieee dot precision, not TF32); bf16 under the interpreter, whose bf16 arithmetic
    is silently wrong. fp16/bf16 on a GPU keep tensor-core dots with fp32 accumulation.
    """
    return dtype == torch.float32 or (dtype == torch.bfloat16 and interpreting())


__all__ = ["HAS_TRITON", "KernelBackendError", "interpreting", "requested_backend", "tl", "triton",
           "upcast_in_kernel", "use_triton"]
