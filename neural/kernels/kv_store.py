"""Writes new K/V rows into their cache slots: PyTorch reference."""
import torch


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


def store_kvcache(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    store_kvcache_ref(key, value, k_cache, v_cache, slot_mapping)
