"""Every Triton kernel (run by the CPU interpreter) agrees with its PyTorch reference over edge cases."""
import pytest
import torch

from neural.kernels import KernelBackendError, paged_attention, paged_attention_decode, silu_and_mul
from neural.kernels import activation, backend
from neural.kernels.activation import silu_and_mul_ref, silu_and_mul_triton
from neural.kernels.attention import paged_attention_ref, paged_attention_triton
from neural.kernels.decode_attention import paged_attention_decode_ref, paged_attention_decode_triton
from neural.kernels.kv_store import store_kvcache_ref, store_kvcache_triton
from neural.kernels.norm import rms_norm_ref, rms_norm_triton
from neural.kernels.rotary import apply_rotary_ref, apply_rotary_triton, build_cos_sin_cache

pytestmark = pytest.mark.skipif(not (backend.HAS_TRITON and backend.interpreting()),
                                reason="needs triton with TRITON_INTERPRET=1 (set by tests/conftest.py)")

# fp16 results round the same way as the reference; bf16 is upcast and the interpreter truncates fp32->bf16
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 3e-2}


def _close(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    torch.testing.assert_close(a.float(), b.float(), atol=TOL[dtype], rtol=TOL[dtype])


def _paged_cache(lens: list[int], page: int, n_kv: int, d: int, dtype: torch.dtype, max_blocks: int):
    """A cache whose blocks are handed out in a shuffled order, and a -1-padded block table."""
    need = sum(-(-n // page) for n in lens)
    n_blocks = need + 3
    k_cache = torch.randn(n_blocks, page, n_kv, d).to(dtype)
    v_cache = torch.randn(n_blocks, page, n_kv, d).to(dtype)
    free = torch.randperm(n_blocks).tolist()
    table = torch.full((len(lens), max_blocks), -1, dtype=torch.int32)
    for i, n in enumerate(lens):
        for j in range(-(-n // page)):
            table[i, j] = free.pop()
    return k_cache, v_cache, table


DECODE_CASES = [  # (dtype, heads, kv heads, head dim, page, splits): GQA 1, 3, 8; head dims 64 and 128
    (torch.float32, 6, 2, 64, 4, 1),
    (torch.float32, 4, 4, 128, 4, 2),
    (torch.float16, 8, 1, 128, 4, 3),
    (torch.float16, 9, 3, 64, 16, 2),
    (torch.bfloat16, 3, 3, 64, 4, 2),
]


@pytest.mark.parametrize("dtype,heads,n_kv,d,page,splits", DECODE_CASES)
def test_decode_attention_matches_reference(dtype, heads, n_kv, d, page, splits) -> None:
    torch.manual_seed(1)
    lens = [1, 13, 30]  # one token; lengths not a multiple of the page; several pages
    k_cache, v_cache, table = _paged_cache(lens, page, n_kv, d, dtype, max_blocks=-(-32 // page))
    q = torch.randn(3, heads, d).to(dtype)
    ctx = torch.tensor(lens, dtype=torch.int32)
    ref = paged_attention_decode_ref(q, k_cache, v_cache, table, ctx, d**-0.5)
    out = paged_attention_decode_triton(q, k_cache, v_cache, table, ctx, d**-0.5, num_splits=splits, block_n=16)
    _close(out, ref, dtype)


def test_decode_attention_strided_query_and_split_count_do_not_change_the_result() -> None:
    torch.manual_seed(2)
    lens = [5, 17]
    k_cache, v_cache, table = _paged_cache(lens, 4, 2, 64, torch.float32, max_blocks=6)
    qkv = torch.randn(2, 4 + 2 + 2, 64)  # q is a strided view of a fused qkv projection
    q = qkv[:, :4]
    ctx = torch.tensor(lens)
    ref = paged_attention_decode_ref(q.contiguous(), k_cache, v_cache, table, ctx, 0.2)
    for splits in (1, 4):
        out = paged_attention_decode_triton(q, k_cache, v_cache, table, ctx, 0.2, num_splits=splits, block_n=16)
        _close(out, ref, torch.float32)


VARLEN_CASES = [  # (dtype, heads, kv heads, head dim)
    (torch.float32, 6, 2, 64),
    (torch.float16, 8, 1, 128),
    (torch.float16, 3, 3, 64),
    (torch.bfloat16, 9, 3, 64),
]


@pytest.mark.parametrize("dtype,heads,n_kv,d", VARLEN_CASES)
def test_varlen_attention_matches_reference(dtype, heads, n_kv, d) -> None:
    torch.manual_seed(3)
    # decode (1 of 9), prefix-cache hit (5 new of 13), no new tokens, full prefill of 18 (> one 16-row tile)
    lens, n_new = [9, 13, 4, 18], [1, 5, 0, 18]
    k_cache, v_cache, table = _paged_cache(lens, 4, n_kv, d, dtype, max_blocks=6)
    cu = torch.tensor([0, 1, 6, 6, 24], dtype=torch.int32)
    q = torch.randn(sum(n_new), heads, d).to(dtype)
    ctx = torch.tensor(lens, dtype=torch.int32)
    ref = paged_attention_ref(q, k_cache, v_cache, table, cu, ctx, 0.125)
    out = paged_attention_triton(q, k_cache, v_cache, table, cu, ctx, 0.125, block_m=16, block_n=16)
    _close(out, ref, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_store_kvcache_matches_reference_and_skips_padding(dtype) -> None:
    torch.manual_seed(4)
    kv = torch.randn(5, 2 * 3, 64).to(dtype)  # key/value are strided views of one [N, 2*Hkv, D] tensor
    key, value = kv[:, :3], kv[:, 3:]
    slots = torch.tensor([7, -1, 0, 15, 9])
    caches = [torch.zeros(4, 4, 3, 64, dtype=dtype) for _ in range(4)]
    store_kvcache_triton(key, value, caches[0], caches[1], slots)
    store_kvcache_ref(key, value, caches[2], caches[3], slots)
    assert torch.equal(caches[0], caches[2]) and torch.equal(caches[1], caches[3])
    assert int((caches[0].reshape(16, -1).abs().sum(-1) > 0).sum()) == 4  # the -1 row went nowhere


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_rms_norm_matches_reference(dtype) -> None:
    torch.manual_seed(5)
    x = torch.randn(2, 3, 576).to(dtype)  # SmolLM's hidden size: not a power of two
    res = torch.randn(2, 3, 576).to(dtype)
    w = torch.randn(576).to(dtype)
    out, res_out = rms_norm_triton(x, w, 1e-5, res)
    ref, ref_res = rms_norm_ref(x, w, 1e-5, res)
    _close(out, ref, dtype)
    _close(res_out, ref_res, dtype)
    out, res_out = rms_norm_triton(x, w, 1e-5)
    _close(out, rms_norm_ref(x, w, 1e-5)[0], dtype)
    assert res_out is x


@pytest.mark.parametrize("dtype,d", [(torch.float32, 64), (torch.float16, 128), (torch.bfloat16, 64)])
def test_rotary_matches_reference(dtype, d) -> None:
    torch.manual_seed(6)
    cache = build_cos_sin_cache(d, 64, 10000.0)
    qkv = torch.randn(5, 9 + 3 + 3, d).to(dtype)
    q, k = qkv[:, :9], qkv[:, 9:12]  # strided views, as sliced from a fused projection
    pos = torch.tensor([0, 1, 63, 7, 7])
    out_q, out_k = apply_rotary_triton(q, k, pos, cache)
    ref_q, ref_k = apply_rotary_ref(q, k, pos, cache)
    _close(out_q, ref_q, dtype)
    _close(out_k, ref_k, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_silu_and_mul_matches_reference(dtype) -> None:
    torch.manual_seed(7)
    x = (3 * torch.randn(2, 3, 2 * 1500)).to(dtype)  # 1500 columns span two 1024-wide programs
    _close(silu_and_mul_triton(x), silu_and_mul_ref(x), dtype)


def test_dispatch_follows_device_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randn(2, 8)
    calls: list[str] = []
    monkeypatch.setattr(activation, "silu_and_mul_triton", lambda t: calls.append("triton") or silu_and_mul_ref(t))
    monkeypatch.delenv(backend.ENV_VAR, raising=False)
    silu_and_mul(x)  # auto: CPU tensors take the reference
    assert calls == []
    monkeypatch.setenv(backend.ENV_VAR, "triton")
    silu_and_mul(x)
    assert calls == ["triton"]
    monkeypatch.setenv(backend.ENV_VAR, "reference")
    silu_and_mul(x)
    assert calls == ["triton"]
    monkeypatch.setenv(backend.ENV_VAR, "cuda-please")
    with pytest.raises(KernelBackendError, match="VERIRAG_KERNELS='cuda-please' is not one of"):
        silu_and_mul(x)


def test_bad_inputs_get_clear_errors() -> None:
    with pytest.raises(ValueError, match="last dimension must be even"):
        silu_and_mul(torch.randn(2, 7))
    k_cache = torch.zeros(2, 4, 2, 8)
    with pytest.raises(ValueError, match="multiple of the 2 kv heads"):
        paged_attention_decode(torch.randn(1, 3, 8), k_cache, k_cache, torch.zeros(1, 2, dtype=torch.int32),
                               torch.tensor([1]), 1.0)
    with pytest.raises(ValueError, match="cu_seqlens_q needs 2 entries"):
        paged_attention(torch.randn(1, 2, 8), k_cache, k_cache, torch.zeros(1, 2, dtype=torch.int32),
                        torch.tensor([0, 1, 1]), torch.tensor([1]), 1.0)
