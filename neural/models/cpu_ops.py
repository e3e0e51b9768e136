"""CPU fast paths for the per-layer ops whose kernel references (or torch defaults) are slow on CPU.

The ops in neural.kernels run their PyTorch *reference* on CPU, written for clarity (einsum over a padded
gather; boolean-mask scatter). On the 2-core CPU those cost ~2x (attention) and ~10x (store) what the
same math costs through SDPA with GQA and index_copy_. Same contract, same cache layout, still paged (K/V
gathered through the block table every step); tests check equality against the references. Chosen once
per model: CUDA tensors and VERIRAG_KERNELS=triton/reference keep the kernels' own dispatch.
"""
from __future__ import annotations


import torch
import torch.nn.functional as F

from neural.attention_metadata import DecodeGather
from neural.kernels import paged_attention, paged_attention_decode, silu_and_mul, store_kvcache
from neural.kernels.attention import gather_sequence_kv, prefix_causal_mask
from neural.kernels.backend import requested_backend


def store_kvcache_cpu(
    key: torch.Tensor, value: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, slot_mapping: torch.Tensor
) -> None:
    """The engine never emits -1 slots (no padding rows), so a plain index_copy_ covers the contract."""
    flat = (-1, *k_cache.shape[2:])
    if key.dtype != k_cache.dtype:  # each skipped no-op dispatch counts: see rotate_qk_cpu on per-op cost
        key, value = key.to(k_cache.dtype), value.to(v_cache.dtype)
    k_cache.view(flat).index_copy_(0, slot_mapping, key)
    v_cache.view(flat).index_copy_(0, slot_mapping, value)


# SDPA's CPU flash kernel, called as SDPA itself calls it for float32: SDPA's own entry point re-checks the
# inputs and picks a backend every call, 30 times a step. Same kernel, same inputs: bit-identical.
_FLASH_CPU = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default


def paged_attention_decode_cpu(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """One query per sequence: gather each table's blocks, masked SDPA with grouped KV heads."""
    gather = DecodeGather.build(block_tables, context_lens, k_cache.shape[1], q.dtype)
    return paged_attention_decode_gathered(q, k_cache, v_cache, gather, scale)


def paged_attention_decode_gathered(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, gather: DecodeGather, scale: float
) -> torch.Tensor:
    """paged_attention_decode_cpu with the step's gather index and mask already built."""
    batch, n_heads, head_dim = q.shape
    n_kv, width = k_cache.shape[2], gather.key_mask.shape[-1]
    # index_select on the flat table, not k_cache[ids]: same bytes, ~3x faster than advanced indexing on CPU
    # (the gather was ~15 % of a 16-sequence decode step). A lone sequence on consecutive blocks could read its
    # slots in place instead, but that measured no faster at 1-1,000 tokens of context (flash attention over
    # cold cache lines, strided by head, lost what the copy cost; 2-core machine, one stream, 2026-12-02)
    row_seqs = gather.row_seqs
    tables = batch if row_seqs is None else gather.block_ids.numel() * k_cache.shape[1] // width
    k = k_cache.index_select(0, gather.block_ids).view(tables, width, n_kv, head_dim).transpose(1, 2)
    v = v_cache.index_select(0, gather.block_ids).view(tables, width, n_kv, head_dim).transpose(1, 2)
    if row_seqs is not None and tables != batch:  # a verify step's rows: one gather a sequence, read in place
        k, v = (k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) if tables == 1 else \
            (k.index_select(0, row_seqs), v.index_select(0, row_seqs))
    if q.dtype == torch.float32 and k.dtype == torch.float32:
        out = _FLASH_CPU(q.unsqueeze(2), k, v, 0.0, False, attn_mask=gather.key_mask, scale=scale)[0]
    else:
        out = F.scaled_dot_product_attention(
            q.unsqueeze(2), k, v, attn_mask=gather.key_mask, scale=scale, enable_gqa=n_kv != n_heads
        )
    return out.view(batch, n_heads, head_dim)


def paged_attention_cpu(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """Varlen causal attention (prefill, chunked prefill, prefix hits, speculative verify), per sequence.

    The reference repeats K/V per query head and runs 3-D SDPA; here SDPA groups the heads itself. A
    speculative verify step (k + 1 queries over a long context) spent more in the reference's repeat and
    SDPA's math path than in its weight GEMMs.
    """
    out = torch.empty_like(q)
    n_heads, n_kv = q.shape[1], k_cache.shape[2]
    cu, lens = cu_seqlens_q.tolist(), context_lens.tolist()
    for i, ctx in enumerate(lens):
        n_q = cu[i + 1] - cu[i]
        if n_q == 0:
            continue
        k, v = gather_sequence_kv(k_cache, v_cache, block_tables[i], ctx)
        q_i, k, v = q[cu[i] : cu[i + 1]].transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        if q.dtype != torch.float32:  # fp32 math for low-precision inputs, as the reference
            q_i, k, v = q_i.float(), k.float(), v.float()
        causal = n_q == ctx  # no cached prefix: plain causal, no mask to build
        mask = None if causal else prefix_causal_mask(ctx, n_q, q.device)
        # 4-D inputs: with 3-D ones SDPA leaves the CPU flash kernel for the math path (GQA copies, bmm)
        o = F.scaled_dot_product_attention(
            q_i[None], k[None], v[None], attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=n_kv != n_heads
        )
        out[cu[i] : cu[i + 1]] = o[0].transpose(0, 1).to(q.dtype)
    return out


# Batches whose weight GEMMs go through linear_cpu's W @ x^T form; see linear_cpu for the measurements.
SMALL_BATCH_ROWS = range(2, 65)


def gemm_columns(rows: int) -> int:
    """Columns of x^T to give MKL's ``W @ x^T``: ``rows`` rounded up to an MKL-friendly width (zero padding).

    MKL's time for thirty layers + LM head at 2 threads is far from monotonic in the column count (ms, two
    runs): 3: 62-69, 4: 50-65; 7: 100-108, 8: 76-85; 10-15: 95-170, 16: 90-111; 19-23: 156-210, 24: 141-146;
    25-31: 162-214, 32: 146-160 (scratch benchmark with distinct weights, 2026-11-29). Zero columns cost
    nothing that matters and do not change the real columns' dot products.
    """
    if rows == 3:
        return 4
    if rows >= 7:
        return -(-rows // 8) * 8
    return rows


def pad_rows(x: torch.Tensor, rows: int) -> torch.Tensor:
    """``x`` with zero rows appended up to ``rows``, contiguous (a GEMM's padded columns)."""
    if x.shape[0] == rows:
        return x.contiguous()
    return torch.cat([x, x.new_zeros(rows - x.shape[0], x.shape[1])])


def linear_cpu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear`` for fp32 CPU, computed as ``(W @ x^T)^T`` when x has 2..64 rows.

    At a few rows a decode step only streams the weights from memory, and MKL's ``x @ W^T`` GEMM repacks
    W first: on the 2-core AVX2 machine thirty 3072x576 projections took 53 ms at 2 rows and 68 ms at 5
    against 27 ms at 1 row (a GEMV), while ``W @ x^T`` took 28 and 35 ms; the 49152-row LM head 40 -> 21 ms
    at 2 rows (scratch benchmarks, 2026-11-29). This is what makes a speculative verify step (k + 1 rows)
    and a small continuous batch cost about one decode step. One row stays a GEMV (bit-identical to HF's
    single-stream decode) and prefill-sized inputs stay on F.linear, which is faster there; the two forms
    differ by float rounding only (~5e-5 on unit-scale inputs).
    """
    if x.dim() == 2 and x.dtype == torch.float32 and weight.dtype == torch.float32:
        rows = x.shape[0]
        if rows in SMALL_BATCH_ROWS:
            y = torch.mm(weight, pad_rows(x, gemm_columns(rows)).t())[:, :rows].t().contiguous()
            return y if bias is None else y.add_(bias)
        parts = torch.get_num_threads()
        if rows == 1 and parts > 1 and weight.shape[0] % parts == 0:
            y = split_gemv(x, weight, parts)
            return y if bias is None else y.add_(bias)
    return F.linear(x, weight, bias)


def split_gemv(x: torch.Tensor, weight: torch.Tensor, parts: int) -> torch.Tensor:
    """``F.linear`` of one row as a batched GEMM over ``parts`` slices of W's rows, bit-identical to it.

    MKL runs a one-row ``x @ W^T`` as a single-threaded GEMV: on the 2-core machine the 49152x576 LM head
    took 14 ms at 1 and at 2 threads; a 2-slice bmm spreads the slices over the cores and 30 layers + LM
    head (538 MB of weights streamed from memory) went from 75 to 50 ms per step (scratch benchmark
    with distinct weights per layer, 2026-11-29). Each output element is the same dot product in the same
    order as the GEMV's: on that machine the result is bit-identical to F.linear (HF's single-stream decode).
    """
    slices = weight.view(parts, weight.shape[0] // parts, weight.shape[1])
    y = torch.bmm(x.unsqueeze(0).expand(parts, -1, -1), slices.transpose(1, 2))
    return y.permute(1, 0, 2).reshape(1, weight.shape[0])


def rms_norm_cpu(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm as the reference (HF's) computes it, written out; fp32 math for low-precision inputs.

    Not F.rms_norm: on this CPU build it is a composite that copies its input to float32 even when it is
    float32 and runs a TensorIterator per step; with the caches cold, as they are between a decode step's weight
    GEMMs, it took 85 us a call at one 576-wide row against 48 us for these ops (py-spy: 17 % of a one-stream
    int8 step, 61 calls). Same ops in the same order as the reference: bit-identical in float32.
    """
    if residual is not None:
        x = x + residual
    if x.dtype == torch.float32:
        inv = x.pow(2).mean(-1, keepdim=True).add_(eps).rsqrt_()
        return (x * inv).mul_(weight), x
    return F.rms_norm(x.float(), (x.shape[-1],), None, eps).to(x.dtype) * weight, x


def rope_cos_sin(cos_sin_cache: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-step RoPE rows ``[T, 1, D]``, looked up once per forward (not once per layer), in the form
    rotate_qk_cpu takes: ``(cos | cos, -sin | sin)``."""
    cos, sin = cos_sin_cache.index_select(0, positions).unsqueeze(1).chunk(2, dim=-1)
    return torch.cat([cos, cos], dim=-1), torch.cat([-sin, sin], dim=-1)


def rotate_qk_cpu(qk: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate-half RoPE on q and k heads at once (``qk`` is ``[T, H + Hkv, D]``, contiguous in the qkv output;
    ``cos``/``sin`` from rope_cos_sin).

    ``qk * (cos|cos) + (x2|x1) * (-sin|sin)``: the halves swapped by one flip of a ``[.., 2, D/2]`` view, so a
    layer spends 3 ops here instead of 9. On the 2-core machine a small op costs 3 us in a loop but 15-30 us
    inside a decode step, whose weight streaming evicts the interpreter's working set from the caches: the
    count of ops per layer is what one-stream decode pays for. Bit-identical to the reference (``a - b`` and
    ``a + (-b)`` round the same).
    """
    t, h, d = qk.shape
    swapped = qk.view(t, h, 2, d // 2).flip(2).view(t, h, d)
    if qk.dtype != torch.float32:
        return (qk.float() * cos + swapped.float() * sin).to(qk.dtype)
    return (qk * cos).add_(swapped * sin)


def silu_and_mul_cpu(x: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up in two ops for float32 (the reference's float()/to() round trips are no-ops there)."""
    if x.dtype != torch.float32:
        return silu_and_mul(x)
    inter = x.shape[-1] // 2
    return F.silu(x[..., :inter]).mul_(x[..., inter:])


def use_cpu_fast_paths(device: torch.device) -> bool:
    """CPU tensors under the default dispatch; CUDA and a forced VERIRAG_KERNELS keep the kernels' path."""
    return device.type == "cpu" and requested_backend() == "auto"


def select_ops(device: torch.device) -> tuple:
    """(store_kvcache, paged_attention_decode, paged_attention) to use for a model living on ``device``."""
    if use_cpu_fast_paths(device):
        return store_kvcache_cpu, paged_attention_decode_cpu, paged_attention_cpu
    return store_kvcache, paged_attention_decode, paged_attention
