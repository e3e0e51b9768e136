"""Rotary position embedding (rotate-half layout, as HF Llama/Qwen2): cache builder, Triton kernel, reference."""
import math

import torch

from neural.kernels.backend import tl, triton, use_triton


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


@triton.jit
def _rotary_kernel(
    x_ptr, out_ptr, pos_ptr, cache_ptr, stride_xt, stride_xh, stride_ot, stride_oh, stride_cache,
    N_HEADS: tl.constexpr, HALF: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr,
):
    # one program per token: cos/sin of its position are loaded once and applied to all heads
    tok = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + tok).to(tl.int64)
    d = tl.arange(0, BLOCK_HALF)
    h = tl.arange(0, BLOCK_H)[:, None]
    dmask = d < HALF
    cos = tl.load(cache_ptr + pos * stride_cache + d, mask=dmask, other=0.0)[None, :]
    sin = tl.load(cache_ptr + pos * stride_cache + HALF + d, mask=dmask, other=0.0)[None, :]
    mask = (h < N_HEADS) & dmask[None, :]
    src = x_ptr + tok * stride_xt + h * stride_xh + d[None, :]
    x1 = tl.load(src, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(src + HALF, mask=mask, other=0.0).to(tl.float32)
    dst = out_ptr + tok * stride_ot + h * stride_oh + d[None, :]
    tl.store(dst, (x1 * cos - x2 * sin).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(dst + HALF, (x2 * cos + x1 * sin).to(out_ptr.dtype.element_ty), mask=mask)


def _rotary_one(x: torch.Tensor, positions: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
    if x.stride(-1) != 1:
        x = x.contiguous()
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n_tok, n_heads, head_dim = x.shape
    if n_tok:
        _rotary_kernel[(n_tok,)](
            x, out, positions, cache, x.stride(0), x.stride(1), out.stride(0), out.stride(1), cache.stride(0),
            N_HEADS=n_heads, HALF=head_dim // 2,
            BLOCK_H=triton.next_power_of_2(n_heads), BLOCK_HALF=triton.next_power_of_2(head_dim // 2),
        )
    return out


def apply_rotary_triton(
    q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    positions = positions.contiguous()
    cache = cos_sin_cache.float().contiguous()
    return _rotary_one(q, positions, cache), _rotary_one(k, positions, cache)


def apply_rotary(
    q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    if q.shape[-1] != cos_sin_cache.shape[-1] or k.shape[-1] != q.shape[-1] or q.shape[-1] % 2:
        raise ValueError(
            f"apply_rotary: head dims q={q.shape[-1]} k={k.shape[-1]} must equal the cache width "
            f"{cos_sin_cache.shape[-1]} and be even"
        )
    if q.shape[0] != positions.shape[0] or k.shape[0] != positions.shape[0]:
        raise ValueError(f"apply_rotary: {positions.shape[0]} positions for {q.shape[0]} q / {k.shape[0]} k tokens")
    if use_triton(q):
        return apply_rotary_triton(q, k, positions, cos_sin_cache)
    return apply_rotary_ref(q, k, positions, cos_sin_cache)
