"""AttentionMetadata: the flattened-batch description every attention layer reads in one forward."""
from __future__ import annotations

from dataclasses import dataclass
import torch


@dataclass
class AttentionMetadata:
    slot_mapping: torch.Tensor  # [T] int64, cache slot of each new token (-1 = do not store)
    block_tables: torch.Tensor  # [B, max_blocks] int32, -1 padded
    context_lens: torch.Tensor  # [B] int32, tokens in the cache after this step
    cu_seqlens_q: torch.Tensor  # [B+1] int32, query offsets of each sequence in the flat batch
    is_decode: bool  # every sequence has exactly one query -> paged_attention_decode
    decode_gather: DecodeGather | None = None  # CPU fast path: the decode gather, built once per forward
    # decode rows of a verify step (ModelRunner.prepare(rows_as_decode=True)): the sequence of each row [T] int64;
    # block_tables then holds one table per sequence, context_lens one length per row. None: one row per sequence
    row_seqs: torch.Tensor | None = None


@dataclass(frozen=True)
class DecodeGather:
    """A decode step's K/V gather index and key mask. Every layer of a step reads the same block tables, so
    the model builds this once per forward: built per layer it cost 10 % of a 16-sequence step (211 -> 190 ms,
    8 sequences 140 -> 132 ms; scratch benchmark on the bench/decode.py prompts, 2 threads, 2026-11-29)."""

    block_ids: torch.Tensor  # [B * max_blocks] int64: the tables flattened, -1 padding read as block 0 (masked)
    # [B, 1, 1, max_blocks * block_size] in the model's dtype: 0 inside each sequence's context, -inf past it.
    # Additive, as SDPA turns a bool mask into before every call (two ops a layer saved)
    key_mask: torch.Tensor
    # rows reading one gathered sequence each (AttentionMetadata.row_seqs): K/V are gathered once per sequence,
    # not once per row -- a verify step's k + 1 rows over a 700-token RAG context copied 5x its K/V every layer
    row_seqs: torch.Tensor | None = None

    @classmethod
    def build(cls, block_tables: torch.Tensor, context_lens: torch.Tensor, block_size: int,
              dtype: torch.dtype = torch.float32, row_seqs: torch.Tensor | None = None) -> DecodeGather:
        width = block_tables.shape[1] * block_size
        outside = torch.arange(width, device=block_tables.device)[None, :] >= context_lens[:, None]
        mask = torch.zeros(outside.shape, dtype=dtype, device=outside.device).masked_fill_(outside, float("-inf"))
        return cls(block_tables.long().clamp_min(0).view(-1), mask[:, None, None, :], row_seqs)
