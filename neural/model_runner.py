"""ModelRunner: owns the model and the one KV pool; turns a scheduled batch into flat tensors and logits."""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any
from typing import Sequence as Seq

import numpy as np
import torch
from torch import nn

from neural.attention_metadata import AttentionMetadata
from neural.cuda_graphs import DecodeGraphs
from neural.errors import EngineError
from neural.model_config import ModelConfig
from neural.models.cpu_ops import use_cpu_fast_paths
from neural.models.llama import LlamaForCausalLM
from neural.sequence import Sequence

if TYPE_CHECKING:
    from neural.quant_int8 import Int8Setup

# a speculative verify step whose sequences bring at most this many rows each runs them as decode rows (run)
VERIFY_ROWS_AS_DECODE = 16


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


def kv_bytes_per_block(cfg: ModelConfig, block_size: int, dtype: torch.dtype, num_layers: int | None = None) -> int:
    """Bytes of one KV block over ``num_layers`` layers (default: all of the model's)."""
    layers = cfg.num_hidden_layers if num_layers is None else num_layers
    elem = torch.empty(0, dtype=dtype).element_size()
    return 2 * layers * block_size * cfg.num_key_value_heads * cfg.head_dim * elem


def _build_model(model_config: ModelConfig, weights: Any, dtype: torch.dtype, device: torch.device, block_size: int,
                 max_model_len: int, packed: dict | None, int8: "Int8Setup | None") -> LlamaForCausalLM:
    """The model with its weights in place: packed GGUF layers, a cached int8 state, or dense weights."""
    with torch.device("meta"):  # no random init of weights we are about to overwrite
        model = LlamaForCausalLM(model_config, max_model_len)
    if packed:
        install_packed(model, packed, dtype, device)
    cached_rest = None
    if int8 is not None and int8.state is not None:
        from neural.quant_int8 import install

        cached_rest = install(model, int8.state, int8.plan.residual)
    for module in model.modules():  # materialise what is still on meta (all of it when nothing is packed)
        if any(t.is_meta for t in module.parameters(recurse=False)) or any(
            t.is_meta for t in module.buffers(recurse=False)
        ):
            module.to_empty(device=device, recurse=False)
    if cached_rest is not None:
        model.load_state(cached_rest, dtype)
    else:
        model.load_weights(weights, dtype)
    if int8 is not None and int8.state is None:
        from neural.quant_int8 import quantize

        int8.state, int8.built = quantize(model, int8, block_size), True
    return model.eval()


class ModelRunner:
    # Class-level defaults: every runner starts with no decode graphs (capture_decode_graphs sets them).
    graphs: DecodeGraphs | None = None
    num_graph_steps: int = 0  # decode steps handed to self.graphs (replayed, or eager when too large)
    graph_capture_error: str | None = None  # why CUDA graph capture failed, if it did (steps then run eagerly)
    max_model_len: int = 0

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
        prepack_weights: bool = False,
        int8: "Int8Setup | None" = None,
        *,
        model: LlamaForCausalLM | None = None,
    ) -> None:
        """``packed``: module name -> PackedWeight kept quantized (see neural.loader.gguf); the rest of the
        model's weights come dense from ``weights``. ``prepack_weights``: see EngineConfig.cpu_prepack_weights.
        ``int8``: projections to run int8 (neural.quant_int8); with a cached ``int8.state`` the whole model
        comes from it and ``weights`` is never read, else the fp32 model is built and quantized here.
        ``model``: an already built model to run (a draft made of the target's first layers shares their
        weights); ``weights``, ``packed`` and ``int8`` are then not used. Either way the runner allocates its
        own KV cache for the model's layers."""
        self.config = model_config
        self.device, self.dtype = device, dtype
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.model = model if model is not None else _build_model(
            model_config, weights, dtype, device, block_size, max_model_len, packed, int8)
        self.allocate_kv_cache(num_blocks, prepack_weights)

    def allocate_kv_cache(self, num_blocks: int, prepack_weights: bool = False) -> None:
        """The whole KV cache, allocated at once ``[2, layers, blocks, block_size, kv_heads, head_dim]`` and
        bound to the model's layers (the GPU engine re-allocates once the weights show what memory is free)."""
        cfg = self.config
        self.num_blocks = num_blocks
        self.kv_cache = torch.zeros(
            2, len(self.model.layers), num_blocks, self.block_size, cfg.num_key_value_heads, cfg.head_dim,
            dtype=self.dtype, device=self.device,
        )
        self.model.bind_kv_cache(self.kv_cache, prepack_weights)
  # no random init of weights we are about to overwrite

    def prepare(
        self, seqs: list[Sequence], num_new_tokens: list[int], rows_as_decode: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata]:
        """Flatten the step: each sequence contributes tokens [num_computed, num_computed + n).

        ``rows_as_decode``: every query row becomes a decode row of its own (its sequence's block table, its
        position + 1 as context), so a speculative verify step's k + 1 rows run the decode step's arithmetic
        and score exactly what k + 1 plain decode steps would (greedy output identical; see run)."""
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
        row_seqs = None
        if rows_as_decode and not is_decode:
            row_seqs = torch.from_numpy(rows.astype(np.int64)).to(self.device)
            ctx, cu, is_decode = pos + 1, np.arange(len(ids) + 1, dtype=np.int32), True
        dev = self.device
        input_ids = torch.tensor(ids, dtype=torch.long, device=dev)
        meta = AttentionMetadata(
            slot_mapping=torch.from_numpy(slots).to(dev),
            block_tables=torch.from_numpy(tables).to(dev),
            context_lens=torch.from_numpy(ctx.astype(np.int32)).to(dev),
            cu_seqlens_q=torch.from_numpy(cu).to(dev),
            is_decode=is_decode,
            row_seqs=row_seqs,
        )
        return input_ids, torch.from_numpy(pos).to(dev), meta

    def _decode_step(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        slot_mapping: torch.Tensor,
        block_tables: torch.Tensor,
        context_lens: torch.Tensor,
    ) -> torch.Tensor:
        """One token per sequence -> final hidden states: the step a CUDA graph captures (no host syncs)."""
        cu = torch.arange(input_ids.shape[0] + 1, dtype=torch.int32, device=input_ids.device)
        meta = AttentionMetadata(slot_mapping, block_tables, context_lens, cu, is_decode=True)
        return self.model(input_ids, positions, meta)

    def capture_decode_graphs(self, batch_sizes: Seq[int], *, eager_replay: bool = False) -> list[int]:
        """Capture the decode step for ``batch_sizes`` once the final KV cache is bound; returns the sizes.

        CUDA only: on CPU it captures nothing and returns ``[]``, unless ``eager_replay`` (a test hook: static
        buffers and padding without CUDA graphs, see DecodeGraphs.capture). Padding rows carry slot -1,
        which the CPU fast KV store does not skip, so eager replay on CPU needs VERIRAG_KERNELS=reference
        set before the engine is built. A capture that fails on a GPU (e.g. a layer that syncs with the
        host) warns and leaves every step eager, with the reason in ``graph_capture_error``.
        """
        if self.device.type != "cuda" and not eager_replay:
            return []
        if eager_replay and use_cpu_fast_paths(self.device):
            raise EngineError("eager-replay decode graphs on CPU need VERIRAG_KERNELS=reference set before the "
                              "engine is built: padding rows use slot -1, which the CPU fast KV store does not skip")
        # a sequence never holds more blocks than max_model_len needs, nor more than the pool has
        max_blocks = min(math.ceil(self.max_model_len / self.block_size), self.num_blocks)
        graphs = DecodeGraphs(self._decode_step, list(batch_sizes), max(1, max_blocks))
        self.graphs = None
        try:
            graphs.capture(self.device, eager_replay=eager_replay)
        except Exception as exc:  # noqa: BLE001 - eager decode is always correct, a failed capture only slower
            if eager_replay:
                raise
            self.graph_capture_error = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"CUDA graph capture failed, decode runs eagerly: {self.graph_capture_error}", stacklevel=2)
            return []
        self.graphs = graphs
        return graphs.captured_sizes()

    @torch.inference_mode()
    def run(
        self, seqs: list[Sequence], num_new_tokens: list[int], logits_rows: list[int] | None = None
    ) -> torch.Tensor:
        """Forward one step; returns float32 logits for the flat-batch rows ``logits_rows``.

        Default rows: each sequence's last query. A speculative verifier passes every query row of a
        sequence to score several draft tokens from one forward.
        """
        # a verify step of short proposals runs as decode rows where the decode step is the flat CPU step:
        # the module path's varlen attention and batched rows round near-ties differently from it
        rows_as_decode = (logits_rows is not None and self.model.flat_decode is not None
                          and max(num_new_tokens) <= VERIFY_ROWS_AS_DECODE)
        input_ids, positions, meta = self.prepare(seqs, num_new_tokens, rows_as_decode)
        if self.graphs is not None and meta.is_decode and logits_rows is None:
            # the engine's -1-padded block table goes in as is: see DecodeGraphs.run on why -1 and 0 agree
            self.num_graph_steps += 1
            hidden = self.graphs.run(input_ids, positions, meta.slot_mapping, meta.block_tables, meta.context_lens)
            return self.model.compute_logits(hidden)  # LM head outside the graph: its rows are the real batch
        hidden = self.model(input_ids, positions, meta)
        if logits_rows is None:
            idx = meta.cu_seqlens_q[1:].long() - 1
            hidden = hidden if meta.is_decode else hidden.index_select(0, idx)
        else:
            hidden = hidden.index_select(0, torch.tensor(logits_rows, dtype=torch.long, device=hidden.device))
        return self.model.compute_logits(hidden)
