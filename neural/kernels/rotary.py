"""Rotary position embedding (rotate-half layout, as HF Llama/Qwen2): cache builder and reference."""
import math

import torch


def build_cos_sin_cache(
    head_dim: int,
    max_position: int,
    theta: float,
    rope_scaling: dict | None = None,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """Returns ``[max_position, head_dim]`` float32: cos in the first half, sin in the second."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    if rope_scaling and rope_scaling.get("rope_type", rope_scaling.get("type")) == "llama3":
        inv_freq = _llama3_scale(inv_freq, rope_scaling)
    elif rope_scaling and rope_scaling.get("rope_type", rope_scaling.get("type")) == "linear":
        inv_freq = inv_freq / float(rope_scaling["factor"])
    t = torch.arange(max_position, dtype=torch.float64)
    freqs = torch.outer(t, inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).float().to(device)


def _llama3_scale(inv_freq: torch.Tensor, cfg: dict) -> torch.Tensor:
    # Llama 3.1 frequency-dependent scaling, as in HF's _compute_llama3_parameters.
    factor = float(cfg["factor"])
    low = float(cfg.get("low_freq_factor", 1.0))
    high = float(cfg.get("high_freq_factor", 4.0))
    old_len = float(cfg.get("original_max_position_embeddings", 8192))
    low_wavelen, high_wavelen = old_len / low, old_len / high
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return torch.where(is_medium, smoothed, scaled)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


def apply_rotary_ref(
    q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """q ``[T, H, D]``, k ``[T, Hkv, D]``, positions ``[T]``."""
    cos, sin = cos_sin_cache[positions].unsqueeze(1).chunk(2, dim=-1)
    return _rotate(q, cos, sin), _rotate(k, cos, sin)


def apply_rotary(
    q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return apply_rotary_ref(q, k, positions, cos_sin_cache)
