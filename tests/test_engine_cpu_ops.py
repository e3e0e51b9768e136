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
    got = paged_attention_decode_cpu(q, k_cache, v_cache, tables, lens, 0.25)
    torch.testing.assert_close(got, ref)
    # float32 calls SDPA's CPU flash kernel directly: bit-identical to SDPA with a bool mask (greedy decode
    # must not move)
    ids = tables.long().clamp_min(0).view(-1)
    k = k_cache.index_select(0, ids).view(3, 16, 2, 16).transpose(1, 2)
    v = v_cache.index_select(0, ids).view(3, 16, 2, 16).transpose(1, 2)
    inside = (torch.arange(16)[None, :] < lens[:, None])[:, None, None, :]
    sdpa = torch.nn.functional.scaled_dot_product_attention(q.unsqueeze(2), k, v, attn_mask=inside, scale=0.25,
                                                            enable_gqa=True)
    assert torch.equal(got, sdpa.view(3, 6, 16))
    low = paged_attention_decode_cpu(q.bfloat16(), k_cache.bfloat16(), v_cache.bfloat16(), tables, lens, 0.25)
    assert low.dtype == torch.bfloat16
    torch.testing.assert_close(low.float(), ref, atol=3e-2, rtol=3e-2)


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
    for rows, width in ((1, 576), (7, 576), (3, 33)):  # float32: the reference's values bit for bit
        x, r, w = torch.randn(rows, width) * 3, torch.randn(rows, width), torch.randn(width)
        for res in (None, r):
            got, ref = rms_norm_cpu(x, w, 1e-5, res), rms_norm_ref(x, w, 1e-5, res)
            assert torch.equal(got[0], ref[0]) and torch.equal(got[1], ref[1])
    cache = build_cos_sin_cache(16, 64, 10000.0)
    positions = torch.tensor([0, 7, 3, 63, 12])
    qk = torch.randn(5, 6 + 2, 16)
    q_ref, k_ref = apply_rotary_ref(qk[:, :6], qk[:, 6:], positions, cache)
    out = rotate_qk_cpu(qk, *rope_cos_sin(cache, positions))
    # float32: bit-identical (greedy decode must not move); bfloat16: the same fp32 math, rounded once
    assert torch.equal(out[:, :6], q_ref) and torch.equal(out[:, 6:], k_ref)
    q16, k16 = apply_rotary_ref(qk[:, :6].bfloat16(), qk[:, 6:].bfloat16(), positions, cache)
    out16 = rotate_qk_cpu(qk.bfloat16(), *rope_cos_sin(cache, positions))
    assert out16.dtype == torch.bfloat16
    assert torch.equal(out16[:, :6], q16) and torch.equal(out16[:, 6:], k16)


def test_silu_and_mul_cpu_is_the_reference_bit_for_bit():
    from neural.kernels.activation import silu_and_mul_ref
    from neural.models.cpu_ops import silu_and_mul_cpu

    torch.manual_seed(7)
    for shape in ((1, 96), (5, 96), (2, 3, 40)):
        x = torch.randn(shape) * 4
        assert torch.equal(silu_and_mul_cpu(x), silu_and_mul_ref(x))
        assert torch.equal(silu_and_mul_cpu(x.bfloat16()), silu_and_mul_ref(x.bfloat16()))


def test_small_batch_linear_matches_f_linear_at_every_row_count():
    from neural.models.cpu_ops import linear_cpu

    torch.manual_seed(2)
    w, b = torch.randn(96, 40), torch.randn(96)
    for rows in (1, 2, 3, 8, 16, 64, 65, 200):
        x = torch.randn(rows, 40)
        for bias in (None, b):
            got = linear_cpu(x, w, bias)
            assert got.shape == (rows, 96) and got.is_contiguous()
            torch.testing.assert_close(got, torch.nn.functional.linear(x, w, bias), rtol=1e-5, atol=1e-5)
    one = torch.randn(1, 40)  # at one thread (conftest's) a single row is F.linear's GEMV itself
    assert torch.equal(linear_cpu(one, w), torch.nn.functional.linear(one, w))


def test_one_row_linear_splits_over_threads_and_matches_f_linear():
    from neural.models.cpu_ops import linear_cpu, split_gemv

    torch.manual_seed(3)
    before = torch.get_num_threads()
    try:
        for threads, out_features in ((2, 96), (3, 96), (2, 1000), (2, 97)):  # 97 rows: no even split -> GEMV
            torch.set_num_threads(threads)
            w, b, x = torch.randn(out_features, 40), torch.randn(out_features), torch.randn(1, 40)
            for bias in (None, b):
                got = linear_cpu(x, w, bias)
                assert got.shape == (1, out_features) and got.is_contiguous()
                # same dot products in the same order: bit-identical on the 2-core AVX2 machine; the tolerance
                # only leaves room for another CPU's MKL picking a different kernel for the batched form
                torch.testing.assert_close(got, torch.nn.functional.linear(x, w, bias), rtol=1e-6, atol=1e-6)
        w, x = torch.randn(12, 5), torch.randn(1, 5)
        torch.testing.assert_close(split_gemv(x, w, 4), x @ w.t())  # slices come back in W's row order
        torch.testing.assert_close(split_gemv(x, w, 3)[0, 4:8], (x @ w[4:8].t())[0])
    finally:
        torch.set_num_threads(before)


def test_model_linears_use_the_small_batch_gemm_only_on_the_cpu_fast_path(monkeypatch):
    import torch.nn.functional as F

    from neural.model_config import ModelConfig
    from neural.models.cpu_ops import linear_cpu
    from neural.models.llama import Linear, LlamaForCausalLM

    cfg = ModelConfig(arch="llama", vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6,
                      rope_theta=10000.0, max_position_embeddings=64, tie_word_embeddings=False,
                      attention_bias=False)
    model = LlamaForCausalLM(cfg, 64)
    linears = [m for m in model.modules() if isinstance(m, Linear)]
    assert len(linears) == 2 * 4 + 1  # qkv, o, gate_up, down per layer + the LM head
    model.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8))
    assert all(m.op is linear_cpu for m in linears)
    monkeypatch.setenv("VERIRAG_KERNELS", "reference")  # forced kernels: plain F.linear everywhere
    model.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8))
    assert all(m.op is F.linear for m in linears)


def test_varlen_attention_matches_reference_for_prefill_prefix_hits_and_verify_rows():
    from neural.kernels.attention import paged_attention_ref
    from neural.models.cpu_ops import paged_attention_cpu

    torch.manual_seed(3)
    # seq 0: fresh prefill (queries = whole context); seq 1: 3 verify rows over a 37-token context;
    # seq 2: no queries this step; seq 3: a chunk of 5 after a cached 16-token prefix (one full block)
    tables = torch.tensor([[4, 9, -1], [11, 0, 7], [2, -1, -1], [5, 13, -1]], dtype=torch.int32)
    lens = torch.tensor([20, 37, 6, 21], dtype=torch.int32)
    cu = torch.tensor([0, 20, 23, 23, 28], dtype=torch.int32)
    for n_heads, n_kv, dtype in ((6, 2, torch.float32), (4, 4, torch.float32), (8, 1, torch.bfloat16)):
        k_cache, v_cache = torch.randn(16, 16, n_kv, 32).to(dtype), torch.randn(16, 16, n_kv, 32).to(dtype)
        q = torch.randn(28, n_heads, 32).to(dtype)
        ref = paged_attention_ref(q, k_cache, v_cache, tables, cu, lens, 0.2)
        got = paged_attention_cpu(q, k_cache, v_cache, tables, cu, lens, 0.2)
        torch.testing.assert_close(got, ref)


def test_decode_gather_is_built_once_per_forward_and_matches_hf(tmp_path, monkeypatch):
    from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model
    from neural import Engine, EngineConfig, SamplingParams
    from neural.models import cpu_ops

    folder = make_tiny_model(tmp_path / "llama", "llama", seed=4, num_hidden_layers=3)
    builds = []
    real_build = cpu_ops.DecodeGather.build.__func__

    def counting_build(cls, block_tables, context_lens, block_size, dtype=torch.float32, row_seqs=None):
        builds.append(block_tables.shape[0])
        return real_build(cls, block_tables, context_lens, block_size, dtype, row_seqs)

    monkeypatch.setattr(cpu_ops.DecodeGather, "build", classmethod(counting_build))
    eng = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20))
    prompts = [[1, 5, 6, 7, 8, 9], [1, 30, 31]]
    outs = eng.generate(prompts, SamplingParams(max_tokens=6, ignore_eos=True))
    assert builds == [2] * 5  # one prefill step, then five decode steps of both sequences: one build each
    hf = load_hf_reference(folder)
    assert [o.token_ids for o in outs] == [hf_greedy(hf, p, 6) for p in prompts]


def test_small_batch_gemm_pads_columns_to_mkl_friendly_widths_without_changing_rows():
    from neural.models.cpu_ops import gemm_columns, linear_cpu

    assert [gemm_columns(r) for r in (2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 33, 64)] == \
        [2, 4, 4, 5, 6, 8, 8, 16, 16, 16, 24, 40, 64]
    torch.manual_seed(6)
    w, b = torch.randn(200, 48), torch.randn(200)
    x = torch.randn(13, 48)
    got = linear_cpu(x, w, b)
    assert got.shape == (13, 200) and got.is_contiguous()
    torch.testing.assert_close(got, torch.nn.functional.linear(x, w, b), rtol=1e-5, atol=1e-5)
    # each row is its own column of W @ x^T: the same rows in a batch of 2 (no padding) agree up to rounding
    torch.testing.assert_close(got[4:6], linear_cpu(x[4:6], w, b), rtol=1e-5, atol=1e-5)
