"""Hot-path operators of the decode engine: one module per operator, each a Triton kernel beside its
PyTorch reference (``*_ref``, also importable). The public op dispatches: CUDA tensors run the Triton kernel,
CPU tensors the reference; ``VERIRAG_KERNELS=reference`` forces the reference on a GPU, ``=triton`` forces
the kernels (on CPU tensors too, under ``TRITON_INTERPRET=1``). See ``neural.kernels.backend``.

The contract every backend (the PyTorch references here, the Triton kernels beside them) obeys:

KV cache layout, per layer: ``k_cache`` and ``v_cache`` of shape
``[num_blocks, block_size, num_kv_heads, head_dim]``. A token's *slot* is
``block_id * block_size + offset``; ``slot_mapping[i] == -1`` means "do not store" (padding).

- ``store_kvcache(key, value, k_cache, v_cache, slot_mapping)``: key/value ``[N, Hkv, D]``.
- ``paged_attention(q, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale)``:
  varlen causal attention over the paged cache. ``q`` is ``[T, H, D]`` holding, for sequence ``i``,
  the queries ``cu_seqlens_q[i]:cu_seqlens_q[i+1]``, which are the *last* positions of its
  ``context_lens[i]`` tokens (whose K/V are already stored). Covers prefill, chunked prefill, prefill
  after a prefix-cache hit, decode (one query per sequence) and speculative verification.
- ``paged_attention_decode(q, k_cache, v_cache, block_tables, context_lens, scale)``: ``q`` ``[B, H, D]``,
  one query per sequence (the decode special case, with its own fast kernel).
- ``rms_norm(x, weight, eps, residual=None) -> (out, residual_out)``: fused ``x + residual`` then RMSNorm.
- ``apply_rotary(q, k, positions, cos_sin_cache) -> (q, k)``: rotate-half (HF/NeoX layout) RoPE.
- ``silu_and_mul(x) -> silu(x[..., :I]) * x[..., I:]``.
"""
from neural.kernels.activation import silu_and_mul
from neural.kernels.attention import paged_attention
from neural.kernels.backend import KernelBackendError
from neural.kernels.decode_attention import paged_attention_decode
from neural.kernels.kv_store import store_kvcache
from neural.kernels.norm import rms_norm
from neural.kernels.rotary import apply_rotary, build_cos_sin_cache

__all__ = [
    "KernelBackendError",
    "apply_rotary",
    "build_cos_sin_cache",
    "paged_attention",
    "paged_attention_decode",
    "rms_norm",
    "silu_and_mul",
    "store_kvcache",
]
