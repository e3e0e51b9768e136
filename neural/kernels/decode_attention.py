"""Paged attention for decode (one query per sequence): split-K Triton kernel and PyTorch reference.

Work split (flash-decoding): one program per (sequence, kv head, split of the context). A program
loads each K/V tile once and applies it to all query heads of its GQA group (padded to 16 rows so the
score and output products run as ``tl.dot``); a second kernel merges the splits by their log-sum-exp.
The split count needs no host sync (it bounds the context by the block table's width), so the op can
be captured in a CUDA graph.
"""
import functools

import torch

from neural.kernels.backend import tl, triton, upcast_in_kernel, use_triton

LOG2E = 1.4426950408889634


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


@triton.jit
def _load_kv_tile(bt_ptr, k_ptr, v_ptr, seq, kvh, toks, tmask, d, dmask,
                  stride_bt, stride_kb, stride_kt, stride_kh, stride_vb, stride_vt, stride_vh, PAGE: tl.constexpr):
    """K and V rows of tokens ``toks`` of sequence ``seq`` (kv head ``kvh``), looked up through its block table."""
    page = tl.load(bt_ptr + seq * stride_bt + toks // PAGE, mask=tmask, other=0).to(tl.int64)
    kvmask = tmask[:, None] & dmask[None, :]
    k = tl.load(k_ptr + (page * stride_kb + (toks % PAGE) * stride_kt + kvh * stride_kh)[:, None] + d[None, :],
                mask=kvmask, other=0.0)
    v = tl.load(v_ptr + (page * stride_vb + (toks % PAGE) * stride_vt + kvh * stride_vh)[:, None] + d[None, :],
                mask=kvmask, other=0.0)
    return k, v


@triton.jit
def _tile_scores(q, k, UPCAST: tl.constexpr):
    """q·kᵀ with fp32 accumulation; UPCAST computes in fp32 (the interpreter's bf16 math is wrong)."""
    if UPCAST:
        s = tl.dot(q, tl.trans(k.to(tl.float32)), input_precision="ieee")
    else:
        s = tl.dot(q, tl.trans(k))
    return s


@triton.jit
def _decode_split_kernel(
    q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr, out_ptr, part_ptr, lse_ptr,
    stride_qb, stride_qh, stride_kb, stride_kt, stride_kh, stride_vb, stride_vt, stride_vh,
    stride_bt, stride_ob, stride_oh, qk_scale, tokens_per_split,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE: tl.constexpr, NUM_SPLITS: tl.constexpr,
    BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr, UPCAST: tl.constexpr,
):
    seq = tl.program_id(0).to(tl.int64)
    kvh = tl.program_id(1)
    split = tl.program_id(2)
    ctx = tl.load(lens_ptr + seq)
    start = split * tokens_per_split
    end = tl.minimum(start + tokens_per_split, ctx)

    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, BLOCK_D)
    heads = kvh * GROUP + g
    gmask = g < GROUP
    dmask = d < HEAD_DIM
    q = tl.load(q_ptr + seq * stride_qb + heads[:, None] * stride_qh + d[None, :],
                mask=gmask[:, None] & dmask[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for tok0 in range(start, end, BLOCK_N):
        toks = tok0 + tl.arange(0, BLOCK_N)
        tmask = toks < end
        k, v = _load_kv_tile(bt_ptr, k_ptr, v_ptr, seq, kvh, toks, tmask, d, dmask,
                             stride_bt, stride_kb, stride_kt, stride_kh, stride_vb, stride_vt, stride_vh, PAGE)
        s = _tile_scores(q, k, UPCAST)
        s = tl.where(tmask[None, :], s * qk_scale, float("-inf"))  # log2 domain: exp2 below
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if UPCAST:
            acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32), input_precision="ieee")
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    l_safe = tl.where(l_i > 0.0, l_i, 1.0)  # an empty split (context shorter than its start) yields 0
    out = acc / l_safe[:, None]
    omask = gmask[:, None] & dmask[None, :]
    if NUM_SPLITS == 1:
        tl.store(out_ptr + seq * stride_ob + heads[:, None] * stride_oh + d[None, :],
                 out.to(out_ptr.dtype.element_ty), mask=omask)
    else:
        # partials are [B, H, NUM_SPLITS, HEAD_DIM] and lse [B, H, NUM_SPLITS], contiguous fp32
        row = (seq * (GROUP * tl.num_programs(1)) + heads) * NUM_SPLITS + split
        tl.store(part_ptr + row[:, None] * HEAD_DIM + d[None, :], out, mask=omask)
        tl.store(lse_ptr + row, tl.where(l_i > 0.0, m_i + tl.log2(l_safe), float("-inf")), mask=gmask)


@triton.jit
def _decode_merge_kernel(
    part_ptr, lse_ptr, out_ptr, stride_ob, stride_oh,
    N_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, NUM_SPLITS: tl.constexpr,
    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr,
):
    seq = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    sp = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    smask = sp < NUM_SPLITS
    row = (seq * N_HEADS + head) * NUM_SPLITS + sp
    lse = tl.load(lse_ptr + row, mask=smask, other=float("-inf"))
    w = tl.exp2(lse - tl.max(lse, axis=0))
    w = tl.where(smask & (lse > float("-inf")), w, 0.0)
    part = tl.load(part_ptr + row[:, None] * HEAD_DIM + d[None, :], mask=smask[:, None] & (d[None, :] < HEAD_DIM),
                   other=0.0)
    out = tl.sum(part * w[:, None], axis=0) / tl.sum(w, axis=0)
    tl.store(out_ptr + seq * stride_ob + head * stride_oh + d, out.to(out_ptr.dtype.element_ty), mask=d < HEAD_DIM)


@functools.lru_cache(maxsize=8)
def _num_sms(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def choose_num_splits(batch: int, n_kv: int, max_tokens: int, device: torch.device) -> int:
    """Enough (sequence, kv head, split) programs to fill the GPU about four times over, ≥ 256 tokens each."""
    sms = _num_sms(device.index or 0) if device.type == "cuda" else 8
    want = triton.cdiv(4 * sms, max(batch * n_kv, 1))
    return max(1, min(want, triton.cdiv(max_tokens, 256), 64))


def paged_attention_decode_triton(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
    *,
    num_splits: int | None = None,
    block_n: int | None = None,
    num_warps: int = 4,
    num_stages: int | None = None,
) -> torch.Tensor:
    batch, n_heads, head_dim = q.shape
    page, n_kv = k_cache.shape[1], k_cache.shape[2]
    group = n_heads // n_kv
    out = torch.empty_like(q)
    if batch == 0:
        return out
    if k_cache.stride(-1) != 1 or v_cache.stride(-1) != 1 or q.stride(-1) != 1:
        raise ValueError("paged_attention_decode: the head dimension of q and the caches must be contiguous")
    max_tokens = block_tables.shape[1] * page  # an upper bound on every context: no host sync
    block_n = block_n or (64 if q.is_cuda else 16)
    splits = num_splits or choose_num_splits(batch, n_kv, max_tokens, q.device)
    tokens_per_split = triton.cdiv(triton.cdiv(max_tokens, splits), block_n) * block_n
    block_d = triton.next_power_of_2(head_dim)
    if splits > 1:
        part = torch.empty(batch, n_heads, splits, head_dim, dtype=torch.float32, device=q.device)
        lse = torch.empty(batch, n_heads, splits, dtype=torch.float32, device=q.device)
    else:
        part = lse = out  # unused by the kernel when NUM_SPLITS == 1
    extra = {"num_stages": num_stages} if num_stages else {}
    _decode_split_kernel[(batch, n_kv, splits)](
        q, k_cache, v_cache, block_tables, context_lens, out, part, lse,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        block_tables.stride(0), out.stride(0), out.stride(1), float(scale) * LOG2E, tokens_per_split,
        GROUP=group, HEAD_DIM=head_dim, PAGE=page, NUM_SPLITS=splits,
        BLOCK_G=max(16, triton.next_power_of_2(group)), BLOCK_D=block_d, BLOCK_N=block_n,
        UPCAST=upcast_in_kernel(q.dtype), num_warps=num_warps, **extra,
    )
    if splits > 1:
        _decode_merge_kernel[(batch, n_heads)](
            part, lse, out, out.stride(0), out.stride(1),
            N_HEADS=n_heads, HEAD_DIM=head_dim, NUM_SPLITS=splits,
            BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=block_d,
        )
    return out


def paged_attention_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    if q.dim() != 3 or q.shape[1] % k_cache.shape[2]:
        raise ValueError(f"paged_attention_decode: q must be [B, H, D] with H a multiple of the "
                         f"{k_cache.shape[2]} kv heads, got {tuple(q.shape)}")
    if use_triton(q):
        return paged_attention_decode_triton(q, k_cache, v_cache, block_tables, context_lens, scale)
    return paged_attention_decode_ref(q, k_cache, v_cache, block_tables, context_lens, scale)
