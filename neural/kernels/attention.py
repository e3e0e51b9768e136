"""Paged attention over the block-table KV cache: PyTorch references (varlen and decode)."""
import torch
import torch.nn.functional as F


def _gather_kv(
    k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    block_size = k_cache.shape[1]
    n_blocks = (length + block_size - 1) // block_size
    ids = block_table[:n_blocks].long()
    k = k_cache[ids].reshape(-1, *k_cache.shape[2:])[:length]
    v = v_cache[ids].reshape(-1, *v_cache.shape[2:])[:length]
    return k, v


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
        k, v = _gather_kv(k_cache, v_cache, block_tables[i], ctx)
        if n_kv != n_heads:
            k = k.repeat_interleave(n_heads // n_kv, dim=1)
            v = v.repeat_interleave(n_heads // n_kv, dim=1)
        # query j sits at absolute position ctx - n_q + j and sees keys 0..that position
        q_pos = torch.arange(ctx - n_q, ctx, device=q.device).unsqueeze(1)
        mask = torch.arange(ctx, device=q.device).unsqueeze(0) <= q_pos
        o = F.scaled_dot_product_attention(
            q_i.transpose(0, 1).float(),
            k.transpose(0, 1).float(),
            v.transpose(0, 1).float(),
            attn_mask=mask,
            scale=scale,
        )
        out[cu[i] : cu[i + 1]] = o.transpose(0, 1).to(q.dtype)
    return out


def paged_attention_decode_ref(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """One query per sequence, batched: gather every sequence's blocks into a padded tensor."""
    batch, n_heads, head_dim = q.shape
    block_size, n_kv = k_cache.shape[1], k_cache.shape[2]
    max_ctx = int(context_lens.max())
    n_blocks = (max_ctx + block_size - 1) // block_size
    ids = block_tables[:, :n_blocks].long().clamp_min(0)
    k = k_cache[ids].reshape(batch, n_blocks * block_size, n_kv, head_dim)
    v = v_cache[ids].reshape(batch, n_blocks * block_size, n_kv, head_dim)
    group = n_heads // n_kv
    qg = q.float().view(batch, n_kv, group, head_dim)
    scores = torch.einsum("bhgd,bthd->bhgt", qg, k.float()) * scale
    valid = torch.arange(n_blocks * block_size, device=q.device)[None, :] < context_lens[:, None]
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    probs = scores.softmax(dim=-1)
    out = torch.einsum("bhgt,bthd->bhgd", probs, v.float())
    return out.reshape(batch, n_heads, head_dim).to(q.dtype)


def paged_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    return paged_attention_ref(q, k_cache, v_cache, block_tables, cu_seqlens_q, context_lens, scale)


def paged_attention_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    return paged_attention_decode_ref(q, k_cache, v_cache, block_tables, context_lens, scale)
