"""ModelRunner: owns the model and the one KV pool; turns a scheduled batch into flat tensors and logits."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from neural.attention_metadata import AttentionMetadata
from neural.model_config import ModelConfig
from neural.models.llama import LlamaForCausalLM
from neural.sequence import Sequence


def install_packed(model: LlamaForCausalLM, packed: dict, dtype: torch.dtype, device: torch.device) -> None:
    """Swap the named modules of a model still on ``meta`` for packed ones holding real tensors on ``device``.

    Done before the dense weights are materialised, so the packed layers never get a float copy. A tied LM
    head shares the embedding's packed buffers.
    """
    from neural.quant import PackedWeight, QuantizationError, QuantizedEmbedding, QuantizedLinear

    if model.config.tie_word_embeddings and "embed_tokens" in packed:
        packed = {**packed, "lm_head": packed["embed_tokens"]}
    on_device: dict[int, PackedWeight] = {}
    for name, pw in packed.items():
        old = model.get_submodule(name)
        if not isinstance(old, (nn.Linear, nn.Embedding)) or tuple(old.weight.shape) != pw.shape:
            raise QuantizationError(f"packed weight {name} {pw.shape} does not fit the model's {old}")
        if id(pw) not in on_device:
            on_device[id(pw)] = PackedWeight(pw.qtype, pw.qs.to(device), pw.d.to(device),
                                             None if pw.m is None else pw.m.to(device))
        pw = on_device[id(pw)]
        if isinstance(old, nn.Embedding):
            new: nn.Module = QuantizedEmbedding(pw, dtype)
        else:  # the bias, if any, is a dense weight: allocated here, filled by load_weights
            bias = None if old.bias is None else torch.empty(old.bias.shape, dtype=dtype, device=device)
            new = QuantizedLinear(pw, bias, dtype)
        parent, _, attr = name.rpartition(".")
        setattr(model.get_submodule(parent) if parent else model, attr, new)


def kv_bytes_per_block(cfg: ModelConfig, block_size: int, dtype: torch.dtype) -> int:
    elem = torch.empty(0, dtype=dtype).element_size()
    return 2 * cfg.num_hidden_layers * block_size * cfg.num_key_value_heads * cfg.head_dim * elem


class ModelRunner:
    def __init__(
        self,
        model_config: ModelConfig,
        weights,
        dtype: torch.dtype,
        device: torch.device,
        block_size: int,
        num_blocks: int,
        max_model_len: int,
        packed: dict | None = None,
    ) -> None:
        """``packed``: module name -> PackedWeight kept quantized (see neural.loader.gguf); the rest of the
        model's weights come dense from ``weights``."""
        self.config = model_config
        self.device, self.dtype = device, dtype
        self.block_size = block_size
        self.num_blocks = num_blocks
        with torch.device("meta"):  # no random init of weights we are about to overwrite
            model = LlamaForCausalLM(model_config, max_model_len)
        if packed:
            install_packed(model, packed, dtype, device)
        for module in model.modules():  # materialise what is still on meta (all of it when nothing is packed)
            if any(t.is_meta for t in module.parameters(recurse=False)) or any(
                t.is_meta for t in module.buffers(recurse=False)
            ):
                module.to_empty(device=device, recurse=False)
        model.load_weights(weights, dtype)
        self.model = model.eval()
        # the whole KV cache, allocated once: [2, layers, blocks, block_size, kv_heads, head_dim]
        self.kv_cache = torch.zeros(
            2, model_config.num_hidden_layers, num_blocks, block_size,
            model_config.num_key_value_heads, model_config.head_dim, dtype=dtype, device=device,
        )
        self.model.bind_kv_cache(self.kv_cache)

    def prepare(
        self, seqs: list[Sequence], num_new_tokens: list[int]
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata]:
        """Flatten the step: each sequence contributes tokens [num_computed, num_computed + n)."""
        bs = self.block_size
        is_decode = all(n == 1 for n in num_new_tokens)
        max_blocks = max(len(s.block_table) for s in seqs)
        tables = np.full((len(seqs), max_blocks), -1, dtype=np.int32)
        for i, s in enumerate(seqs):
            tables[i, : len(s.block_table)] = s.block_table
        if is_decode:
            ids = [s.token_ids[s.num_computed_tokens] for s in seqs]
            pos = np.fromiter((s.num_computed_tokens for s in seqs), dtype=np.int64, count=len(seqs))
            ctx = pos + 1
            cu = np.arange(len(seqs) + 1, dtype=np.int32)
            rows = np.arange(len(seqs))
        else:
            ids = []
            for s, n in zip(seqs, num_new_tokens):
                ids.extend(s.token_ids[s.num_computed_tokens : s.num_computed_tokens + n])
            counts = np.asarray(num_new_tokens, dtype=np.int64)
            starts = np.fromiter((s.num_computed_tokens for s in seqs), dtype=np.int64, count=len(seqs))
            ctx = starts + counts
            cu = np.zeros(len(seqs) + 1, dtype=np.int32)
            np.cumsum(counts, out=cu[1:])
            rows = np.repeat(np.arange(len(seqs)), counts)
            pos = np.arange(int(cu[-1]), dtype=np.int64) - np.repeat(cu[:-1].astype(np.int64) - starts, counts)
        slots = tables[rows, pos // bs].astype(np.int64) * bs + pos % bs
        dev = self.device
        input_ids = torch.tensor(ids, dtype=torch.long, device=dev)
        meta = AttentionMetadata(
            slot_mapping=torch.from_numpy(slots).to(dev),
            block_tables=torch.from_numpy(tables).to(dev),
            context_lens=torch.from_numpy(ctx.astype(np.int32)).to(dev),
            cu_seqlens_q=torch.from_numpy(cu).to(dev),
            is_decode=is_decode,
        )
        return input_ids, torch.from_numpy(pos).to(dev), meta

    @torch.inference_mode()
    def run(
        self, seqs: list[Sequence], num_new_tokens: list[int], logits_rows: list[int] | None = None
    ) -> torch.Tensor:
        """Forward one step; returns float32 logits for the flat-batch rows ``logits_rows``.

        Default rows: each sequence's last query. A speculative verifier passes every query row of a
        sequence to score several draft tokens from one forward.
        """
        input_ids, positions, meta = self.prepare(seqs, num_new_tokens)
        hidden = self.model(input_ids, positions, meta)
        if logits_rows is None:
            idx = meta.cu_seqlens_q[1:].long() - 1
            hidden = hidden if meta.is_decode else hidden.index_select(0, idx)
        else:
            hidden = hidden.index_select(0, torch.tensor(logits_rows, dtype=torch.long, device=hidden.device))
        return self.model.compute_logits(hidden)
