"""SiLU-and-mul (the SwiGLU gate): Triton kernel and PyTorch reference."""
import torch
import torch.nn.functional as F

from neural.kernels.backend import tl, triton, upcast_in_kernel, use_triton


def silu_and_mul_ref(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate.float()).to(x.dtype) * up


@triton.jit
def _silu_and_mul_kernel(x_ptr, out_ptr, stride_x, stride_out, INTER, BLOCK: tl.constexpr, UPCAST: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < INTER
    gate = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * stride_x + INTER + cols, mask=mask, other=0.0)
    # as the reference: silu in fp32, rounded to the input dtype, then the product in that dtype
    act = (gate / (1.0 + tl.exp(-gate))).to(out_ptr.dtype.element_ty)
    if UPCAST:
        out = (act.to(tl.float32) * up.to(tl.float32)).to(out_ptr.dtype.element_ty)
    else:
        out = act * up
    tl.store(out_ptr + row * stride_out + cols, out, mask=mask)


def silu_and_mul_triton(x: torch.Tensor) -> torch.Tensor:
    inter = x.shape[-1] // 2
    x2 = x.reshape(-1, x.shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    out = torch.empty(x2.shape[0], inter, dtype=x.dtype, device=x.device)
    if x2.shape[0] == 0:
        return out.view(*x.shape[:-1], inter)
    block = min(triton.next_power_of_2(inter), 1024)
    grid = (x2.shape[0], triton.cdiv(inter, block))
    _silu_and_mul_kernel[grid](x2, out, x2.stride(0), out.stride(0), inter, BLOCK=block,
                               UPCAST=upcast_in_kernel(x.dtype))
    return out.view(*x.shape[:-1], inter)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    if x.shape[-1] % 2:
        raise ValueError(f"silu_and_mul: last dimension must be even (gate and up halves), got {x.shape[-1]}")
    return silu_and_mul_triton(x) if use_triton(x) else silu_and_mul_ref(x)
