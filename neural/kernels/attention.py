"""Paged attention over the block-table KV cache, varlen (prefill, chunked prefill, prefix hits, verification):
Triton kernel and PyTorch reference. The decode special case lives in ``decode_attention``."""
import torch
import torch.nn.functional as F

from neural.kernels.backend import tl, triton, upcast_in_kernel, use_triton
from neural.kernels.decode_attention import (  # noqa: F401  (re-exported: the public decode op)
    LOG2E,
    _load_kv_tile,
    _tile_scores,
    paged_attention_decode,
    paged_attention_decode_ref,
    paged_attention_decode_triton,
)


def gather_sequence_kv(
    k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """One sequence's first ``length`` cached K and V rows ``[length, kv_heads, head_dim]``, via its block table.

    index_select, not ``k_cache[ids]``: the same bytes, several times faster on CPU (the CPU fast path uses it too).
    """
    block_size = k_cache.shape[1]
    ids = block_table[: (length + block_size - 1) // block_size].long()
    k = k_cache.index_select(0, ids).view(-1, *k_cache.shape[2:])[:length]
    v = v_cache.index_select(0, ids).view(-1, *v_cache.shape[2:])[:length]
    return k, v


def prefix_causal_mask(context_len: int, num_queries: int, device: torch.device) -> torch.Tensor:
    """``[num_queries, context_len]`` bool: the last ``num_queries`` positions each see the keys up to their own."""
    q_pos = torch.arange(context_len - num_queries, context_len, device=device).unsqueeze(1)
    return torch.arange(context_len, device=device).unsqueeze(0) <= q_pos


def paged_attention_ref(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """Causal attention of each sequence's new queries over its whole cached context."""
    out = torch.empty_like(q)
    n_heads, n_kv = q.shape[1], k_cache.shape[2]
    cu = cu_seqlens_q.tolist()
    lens = context_lens.tolist()
    for i, ctx in enumerate(lens):
        q_i = q[cu[i] : cu[i + 1]]
        n_q = q_i.shape[0]
        if n_q == 0:
            continue
        k, v = gather_sequence_kv(k_cache, v_cache, block_tables[i], ctx)
        if n_kv != n_heads:
            k = k.repeat_interleave(n_heads // n_kv, dim=1)
            v = v.repeat_interleave(n_heads // n_kv, dim=1)
        mask = prefix_causal_mask(ctx, n_q, q.device)
        o = F.scaled_dot_product_attention(
            q_i.transpose(0, 1).float(),
            k.transpose(0, 1).float(),
            v.transpose(0, 1).float(),
            attn_mask=mask,
            scale=scale,
        )
        out[cu[i] : cu[i + 1]] = o.transpose(0, 1).to(q.dtype)
    return out


@triton.jit
def _varlen_attention_kernel(
    q_ptr, k_ptr, v_ptr, bt_ptr, cu_ptr, lens_ptr, out_ptr,
    stride_qt, stride_qh, stride_kb, stride_kt, stride_kh, stride_vb, stride_vt, stride_vh,
    stride_bt, stride_ot, stride_oh, qk_scale,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, UPCAST: tl.constexpr,
):
    # one program per (tile of BLOCK_M queries, sequence, query head); tiles past a sequence's end do nothing
    mblk = tl.program_id(0)
    seq = tl.program_id(1).to(tl.int64)
    head = tl.program_id(2)
    q_start = tl.load(cu_ptr + seq).to(tl.int64)
    n_q = tl.load(cu_ptr + seq + 1).to(tl.int64) - q_start
    if mblk * BLOCK_M < n_q:
        ctx = tl.load(lens_ptr + seq).to(tl.int64)
        kvh = head // GROUP
        rows = mblk * BLOCK_M + tl.arange(0, BLOCK_M)
        rmask = rows < n_q
        q_pos = ctx - n_q + rows  # absolute positions of these queries
        d = tl.arange(0, BLOCK_D)
        dmask = d < HEAD_DIM
        q = tl.load(q_ptr + (q_start + rows)[:, None] * stride_qt + head * stride_qh + d[None, :],
                    mask=rmask[:, None] & dmask[None, :], other=0.0)
        if UPCAST:
            q = q.to(tl.float32)
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
        hi = tl.minimum(ctx, ctx - n_q + (mblk + 1) * BLOCK_M)  # causal: keys past the tile's last query unseen
        for tok0 in range(0, hi, BLOCK_N):
            toks = tok0 + tl.arange(0, BLOCK_N)
            tmask = toks < hi
            k, v = _load_kv_tile(bt_ptr, k_ptr, v_ptr, seq, kvh, toks, tmask, d, dmask,
                                 stride_bt, stride_kb, stride_kt, stride_kh, stride_vb, stride_vt, stride_vh, PAGE)
            s = _tile_scores(q, k, UPCAST)
            visible = tmask[None, :] & (toks[None, :] <= q_pos[:, None])
            s = tl.where(visible, s * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            m_new = tl.where(m_new > float("-inf"), m_new, 0.0)  # padded rows may see no key at all
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, axis=1)
            if UPCAST:
                acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32), input_precision="ieee")
            else:
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
        out = acc / tl.where(l_i > 0.0, l_i, 1.0)[:, None]
        tl.store(out_ptr + (q_start + rows)[:, None] * stride_ot + head * stride_oh + d[None, :],
                 out.to(out_ptr.dtype.element_ty), mask=rmask[:, None] & dmask[None, :])


def paged_attention_triton(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
    *,
    block_m: int | None = None,
    block_n: int | None = None,
    max_seqlen_q: int | None = None,
) -> torch.Tensor:
    n_tok, n_heads, head_dim = q.shape
    page, n_kv = k_cache.shape[1], k_cache.shape[2]
    out = torch.empty_like(q)
    n_seqs = context_lens.shape[0]
    if n_tok == 0 or n_seqs == 0:
        return out
    if k_cache.stride(-1) != 1 or v_cache.stride(-1) != 1 or q.stride(-1) != 1:
        raise ValueError("paged_attention: the head dimension of q and the caches must be contiguous")
    if max_seqlen_q is None:  # one host sync; callers that know it (the runner) can pass it
        max_seqlen_q = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    block_m = block_m or (64 if q.is_cuda else 16)
    block_n = block_n or (64 if q.is_cuda else 16)
    grid = (triton.cdiv(max_seqlen_q, block_m), n_seqs, n_heads)
    _varlen_attention_kernel[grid](
        q, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, out,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        block_tables.stride(0), out.stride(0), out.stride(1), float(scale) * LOG2E,
        GROUP=n_heads // n_kv, HEAD_DIM=head_dim, PAGE=page,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=triton.next_power_of_2(head_dim),
        UPCAST=upcast_in_kernel(q.dtype),
    )
    return out


def paged_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    if q.dim() != 3 or q.shape[1] % k_cache.shape[2]:
        raise ValueError(f"paged_attention: q must be [T, H, D] with H a multiple of the "
                         f"{k_cache.shape[2]} kv heads, got {tuple(q.shape)}")
    if cu_seqlens_q.shape[0] != context_lens.shape[0] + 1:
        raise ValueError(f"paged_attention: cu_seqlens_q needs {context_lens.shape[0] + 1} entries "
                         f"(one more than context_lens), got {cu_seqlens_q.shape[0]}")
    if use_triton(q):
        return paged_attention_triton(q, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale)
    return paged_attention_ref(q, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale)
