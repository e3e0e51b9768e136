"""AttentionMetadata: the flattened-batch description every attention layer reads in one forward."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from neural.models.cpu_ops import DecodeGather


@dataclass
class AttentionMetadata:
    slot_mapping: torch.Tensor  # [T] int64, cache slot of each new token (-1 = do not store)
    block_tables: torch.Tensor  # [B, max_blocks] int32, -1 padded
    context_lens: torch.Tensor  # [B] int32, tokens in the cache after this step
    cu_seqlens_q: torch.Tensor  # [B+1] int32, query offsets of each sequence in the flat batch
    is_decode: bool  # every sequence has exactly one query -> paged_attention_decode
    decode_gather: DecodeGather | None = None  # CPU fast path: the decode gather, built once per forward
