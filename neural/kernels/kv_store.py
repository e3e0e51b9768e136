"""Writes new K/V rows into their cache slots: Triton kernel and PyTorch reference."""
import torch

from neural.kernels.backend import tl, triton, use_triton


def store_kvcache_ref(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    keep = slot_mapping >= 0
    slots = slot_mapping[keep]
    flat_k = k_cache.view(-1, *k_cache.shape[2:])
    flat_v = v_cache.view(-1, *v_cache.shape[2:])
    flat_k[slots] = key[keep].to(k_cache.dtype)
    flat_v[slots] = value[keep].to(v_cache.dtype)


@triton.jit
def _store_kvcache_kernel(
    key_ptr, value_ptr, k_cache_ptr, v_cache_ptr, slot_ptr,
    stride_kn, stride_kh, stride_vn, stride_vh,
    N_KV: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # one program per token: its whole [Hkv, D] row moves in one masked tile
    tok = tl.program_id(0)
    slot = tl.load(slot_ptr + tok).to(tl.int64)
    if slot >= 0:
        h = tl.arange(0, BLOCK_H)[:, None]
        d = tl.arange(0, BLOCK_D)[None, :]
        mask = (h < N_KV) & (d < HEAD_DIM)
        k = tl.load(key_ptr + tok * stride_kn + h * stride_kh + d, mask=mask)
        v = tl.load(value_ptr + tok * stride_vn + h * stride_vh + d, mask=mask)
        dst = slot * (N_KV * HEAD_DIM) + h * HEAD_DIM + d  # cache rows are contiguous [Hkv, D]
        tl.store(k_cache_ptr + dst, k.to(k_cache_ptr.dtype.element_ty), mask=mask)
        tl.store(v_cache_ptr + dst, v.to(v_cache_ptr.dtype.element_ty), mask=mask)


def store_kvcache_triton(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    n, n_kv, head_dim = key.shape
    if not (k_cache.is_contiguous() and v_cache.is_contiguous()):
        raise ValueError("store_kvcache: k_cache and v_cache must be contiguous")
    if key.stride(-1) != 1 or value.stride(-1) != 1:
        key, value = key.contiguous(), value.contiguous()
    if n == 0:
        return
    _store_kvcache_kernel[(n,)](
        key, value, k_cache, v_cache, slot_mapping.contiguous(),
        key.stride(0), key.stride(1), value.stride(0), value.stride(1),
        N_KV=n_kv, HEAD_DIM=head_dim,
        BLOCK_H=triton.next_power_of_2(n_kv), BLOCK_D=triton.next_power_of_2(head_dim),
    )


def store_kvcache(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    if key.shape[0] != slot_mapping.shape[0]:
        raise ValueError(f"store_kvcache: {key.shape[0]} key rows but {slot_mapping.shape[0]} slots")
    if use_triton(key):
        store_kvcache_triton(key, value, k_cache, v_cache, slot_mapping)
    else:
        store_kvcache_ref(key, value, k_cache, v_cache, slot_mapping)
