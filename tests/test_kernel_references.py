"""The PyTorch reference operators agree with dense, unpaged computations done independently here."""
import torch

from neural.kernels import (
    apply_rotary,
    build_cos_sin_cache,
    paged_attention,
    paged_attention_decode,
    rms_norm,
    silu_and_mul,
    store_kvcache,
)


def _dense_causal(q, k, v, scale):
    # q [n_q, H, D] are the last n_q positions of k/v [ctx, H, D]
    n_q, ctx = q.shape[0], k.shape[0]
    scores = torch.einsum("qhd,khd->hqk", q.double(), k.double()) * scale
    pos = torch.arange(ctx - n_q, ctx)[:, None]
    scores = scores.masked_fill(torch.arange(ctx)[None, :] > pos, float("-inf"))
    return torch.einsum("hqk,khd->qhd", scores.softmax(-1), v.double())


def test_store_then_paged_attention_matches_dense_with_scattered_blocks() -> None:
    torch.manual_seed(0)
    block_size, n_blocks, n_kv, n_heads, d = 4, 16, 2, 6, 8
    k_cache = torch.zeros(n_blocks, block_size, n_kv, d)
    v_cache = torch.zeros_like(k_cache)
    lens, n_new = [7, 1, 9], [3, 1, 9]  # seq 0: prefix-cache hit; seq 1: decode; seq 2: full prefill
    tables = torch.tensor([[5, 2, -1], [11, -1, -1], [0, 9, 3]], dtype=torch.int32)
    ks = [torch.randn(n, n_kv, d) for n in lens]
    vs = [torch.randn(n, n_kv, d) for n in lens]
    for i, n in enumerate(lens):
        slots = torch.tensor([int(tables[i, t // block_size]) * block_size + t % block_size for t in range(n)])
        store_kvcache(ks[i], vs[i], k_cache, v_cache, slots)
    # a padding slot (-1) must not be written anywhere
    before = k_cache.clone()
    store_kvcache(torch.ones(1, n_kv, d), torch.ones(1, n_kv, d), k_cache, v_cache, torch.tensor([-1]))
    assert torch.equal(before, k_cache)
    q = torch.randn(sum(n_new), n_heads, d)
    cu = torch.tensor([0, 3, 4, 13])
    out = paged_attention(q, k_cache, v_cache, tables, cu, torch.tensor(lens), 0.3)
    for i in range(3):
        rep = n_heads // n_kv
        ref = _dense_causal(q[cu[i] : cu[i + 1]], ks[i].repeat_interleave(rep, 1), vs[i].repeat_interleave(rep, 1), 0.3)
        torch.testing.assert_close(out[cu[i] : cu[i + 1]].double(), ref, atol=1e-5, rtol=1e-5)
    # the decode path agrees with the varlen path on one query per sequence
    q1 = torch.randn(3, n_heads, d)
    dec = paged_attention_decode(q1, k_cache, v_cache, tables, torch.tensor(lens), 0.3)
    var = paged_attention(q1, k_cache, v_cache, tables, torch.arange(4), torch.tensor(lens), 0.3)
    torch.testing.assert_close(dec, var, atol=1e-5, rtol=1e-5)


def test_rms_norm_silu_and_rotary_values() -> None:
    x = torch.tensor([[3.0, 4.0]])
    out, res = rms_norm(x, torch.tensor([1.0, 2.0]), eps=0.0, residual=torch.tensor([[1.0, -2.0]]))
    assert torch.equal(res, torch.tensor([[4.0, 2.0]]))
    rms = (10.0) ** 0.5  # sqrt((16 + 4) / 2)
    torch.testing.assert_close(out, torch.tensor([[4.0 / rms, 2 * 2.0 / rms]]))
    y = silu_and_mul(torch.tensor([[0.0, 2.0, 5.0, 3.0]]))
    torch.testing.assert_close(y, torch.tensor([[0.0, 2.0 / (1 + torch.exp(torch.tensor(-2.0))) * 3.0]]))
    cache = build_cos_sin_cache(head_dim=2, max_position=4, theta=10000.0)
    q = torch.tensor([[[1.0, 0.0]]])
    rq, rk = apply_rotary(q, q.clone(), torch.tensor([1]), cache)
    # head_dim 2: one frequency (1.0), rotation by angle = position
    torch.testing.assert_close(rq, torch.tensor([[[torch.cos(torch.tensor(1.0)), torch.sin(torch.tensor(1.0))]]]))
