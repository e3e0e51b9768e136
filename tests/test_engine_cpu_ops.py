"""The engine's CPU fast paths equal the kernel references (decode attention over a paged cache, KV store)."""
from __future__ import annotations

import torch

from neural.kernels.decode_attention import paged_attention_decode_ref
from neural.kernels.kv_store import store_kvcache_ref
from neural.models.cpu_ops import paged_attention_decode_cpu, store_kvcache_cpu


def test_decode_attention_matches_reference_with_ragged_contexts_and_gqa():
    torch.manual_seed(0)
    k_cache, v_cache = torch.randn(20, 4, 2, 16), torch.randn(20, 4, 2, 16)
    # non-contiguous, shuffled block ids and -1 padding in the tables, as the block manager produces
    tables = torch.tensor([[7, 3, 12, -1], [0, -1, -1, -1], [19, 5, 6, 1]], dtype=torch.int32)
    lens = torch.tensor([10, 3, 16], dtype=torch.int32)
    q = torch.randn(3, 6, 16)
    ref = paged_attention_decode_ref(q, k_cache, v_cache, tables, lens, 0.25)
    torch.testing.assert_close(paged_attention_decode_cpu(q, k_cache, v_cache, tables, lens, 0.25), ref)


def test_store_matches_reference():
    key, value = torch.randn(5, 2, 8), torch.randn(5, 2, 8)
    slots = torch.tensor([0, 13, 7, 31, 2])
    a = [torch.zeros(8, 4, 2, 8) for _ in range(2)]
    b = [torch.zeros(8, 4, 2, 8) for _ in range(2)]
    store_kvcache_ref(key, value, a[0], a[1], slots)
    store_kvcache_cpu(key, value, b[0], b[1], slots)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_rms_norm_and_fused_rope_match_references():
    from neural.kernels.norm import rms_norm_ref
    from neural.kernels.rotary import apply_rotary_ref, build_cos_sin_cache
    from neural.models.cpu_ops import rms_norm_cpu, rope_cos_sin, rotate_qk_cpu

    torch.manual_seed(1)
    x, r, w = torch.randn(5, 32), torch.randn(5, 32), torch.randn(32)
    for dtype in (torch.float32, torch.bfloat16):
        got = rms_norm_cpu(x.to(dtype), w.to(dtype), 1e-6, r.to(dtype))
        ref = rms_norm_ref(x.to(dtype), w.to(dtype), 1e-6, r.to(dtype))
        torch.testing.assert_close(got[0], ref[0])
        torch.testing.assert_close(got[1], ref[1])
    cache = build_cos_sin_cache(16, 64, 10000.0)
    positions = torch.tensor([0, 7, 3, 63, 12])
    qk = torch.randn(5, 6 + 2, 16)
    q_ref, k_ref = apply_rotary_ref(qk[:, :6], qk[:, 6:], positions, cache)
    out = rotate_qk_cpu(qk, *rope_cos_sin(cache, positions))
    torch.testing.assert_close(out[:, :6], q_ref)
    torch.testing.assert_close(out[:, 6:], k_ref)
