"""RMSNorm with the fused residual add: PyTorch reference."""
import torch


def rms_norm_ref(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Returns (normed, residual_out) where residual_out = x + residual (or x)."""
    if residual is not None:
        x = x + residual
    residual_out = x
    xf = x.float()
    normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (normed.to(x.dtype) * weight), residual_out


def rms_norm(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    return rms_norm_ref(x, weight, eps, residual)
