"""Llama / Qwen2 decoder over the paged KV cache: RMSNorm, RoPE, GQA, SwiGLU, optional QKV bias."""
from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Callable, Sequence, cast

import torch
import torch.nn.functional as F
from torch import nn

from neural.attention_metadata import AttentionMetadata, DecodeGather
from neural.errors import ModelLoadError
from neural.kernels import (
    apply_rotary,
    build_cos_sin_cache,
    paged_attention,
    paged_attention_decode,
    rms_norm,
    silu_and_mul,
    store_kvcache,
)
from neural.model_config import ModelConfig
from neural.models.cpu_ops import (linear_cpu, paged_attention_decode_gathered, rms_norm_cpu, rope_cos_sin,
                                   rotate_qk_cpu, select_ops, silu_and_mul_cpu, use_cpu_fast_paths)
from neural.models.flat_decode import FlatDecode
from neural.models.onednn_linear import PrepackedLinear, memory_allows_copy, onednn_available


class Linear(nn.Linear):
    """nn.Linear whose op bind_kv_cache swaps for the CPU one (cpu_ops.linear_cpu, onednn_linear.PrepackedLinear)."""

    op: Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor] = staticmethod(F.linear)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x, self.weight, self.bias)


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size), requires_grad=False)
        self.eps = eps
        self.op = rms_norm  # rebound to the CPU fast path by bind_kv_cache

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.op(x, self.weight, self.eps, residual)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.n_kv, self.head_dim = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.q_size, self.kv_size = self.n_heads * self.head_dim, self.n_kv * self.head_dim
        # q, k and v in one matmul: fewer, larger GEMMs is what a CPU/GPU step is made of
        self.qkv_proj = Linear(cfg.hidden_size, self.q_size + 2 * self.kv_size, bias=cfg.attention_bias)
        self.o_proj = Linear(self.q_size, cfg.hidden_size, bias=False)
        self.scale = self.head_dim**-0.5
        self.k_cache = torch.empty(0)  # views into the engine's pool, bound by bind_kv_cache
        self.v_cache = torch.empty(0)
        self.store_kvcache, self.paged_attention_decode = store_kvcache, paged_attention_decode
        self.paged_attention = paged_attention
        self.fused_rope = False  # CPU: rotate q and k in one pass with per-step cos/sin

    def forward(self, x: torch.Tensor, positions: torch.Tensor, rope, meta: AttentionMetadata) -> torch.Tensor:
        """``rope`` is the cos/sin cache, or (cos, sin) rows of this step when fused_rope is on."""
        qkv = self.qkv_proj(x)
        if self.fused_rope:  # views by split: one op where slicing and viewing took four
            qk, v = qkv.view(-1, self.n_heads + 2 * self.n_kv, self.head_dim).split(
                [self.n_heads + self.n_kv, self.n_kv], 1)
            q, k = rotate_qk_cpu(qk, *rope).split([self.n_heads, self.n_kv], 1)
        else:
            v = qkv[:, self.q_size + self.kv_size :].view(-1, self.n_kv, self.head_dim)
            q = qkv[:, : self.q_size].view(-1, self.n_heads, self.head_dim)
            k = qkv[:, self.q_size : self.q_size + self.kv_size].view(-1, self.n_kv, self.head_dim)
            q, k = apply_rotary(q, k, positions, rope)
        self.store_kvcache(k, v, self.k_cache, self.v_cache, meta.slot_mapping)
        if meta.decode_gather is not None:
            o = paged_attention_decode_gathered(q, self.k_cache, self.v_cache, meta.decode_gather, self.scale)
        elif meta.is_decode:
            o = self.paged_attention_decode(q, self.k_cache, self.v_cache, meta.block_tables, meta.context_lens, self.scale)
        else:
            o = self.paged_attention(
                q, self.k_cache, self.v_cache, meta.block_tables, meta.cu_seqlens_q, meta.context_lens, self.scale
            )
        return self.o_proj(o.reshape(-1, self.q_size))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_up_proj = Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=False)
        self.down_proj = Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self.act = silu_and_mul  # rebound to the CPU fast path by bind_kv_cache

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.gate_up_proj(x)))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(
        self,
        x: torch.Tensor,
        residual: torch.Tensor | None,
        positions: torch.Tensor,
        cos_sin: torch.Tensor,
        meta: AttentionMetadata,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        h, residual = self.input_layernorm(x, residual)
        h = self.self_attn(h, positions, cos_sin, meta)
        h, residual = self.post_attention_layernorm(h, residual)
        return self.mlp(h), residual


class LlamaForCausalLM(nn.Module):
    """Serves both Llama and Qwen2 checkpoints: they differ only in config (bias, theta, tying)."""

    def __init__(self, cfg: ModelConfig, max_positions: int) -> None:
        super().__init__()
        self.config = cfg
        # _weight: no random init; on the meta device Embedding's normal_ imports torch's decompositions (~2 s
        # of a cold start) for values load_weights overwrites anyway
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size,
                                         _weight=torch.empty(cfg.vocab_size, cfg.hidden_size))
        # an nn.ModuleList (it registers the layers' parameters), typed as what it holds
        self.layers = cast(Sequence[DecoderLayer],
                           nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.max_positions = max_positions
        self.cos_sin_cache = torch.empty(0)  # float32 always; built by load_weights on the real device
        # CPU fast path (set by bind_kv_cache): per-step RoPE cos/sin rows and one DecodeGather per decode
        # forward, each built once and read by every layer
        self.cpu_fast_path = False
        self.flat_decode: FlatDecode | None = None  # the decode step without module calls (CPU fast path)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata) -> torch.Tensor:
        """Returns final hidden states ``[T, hidden]``; call compute_logits on the rows to sample."""
        if self.flat_decode is not None and meta.is_decode:  # the CPU decode step; the module path below is its
            return self.flat_decode(input_ids, positions, meta)  # reference (tests/test_flat_decode.py)
        x = self.embed_tokens(input_ids)
        residual = None
        rope = rope_cos_sin(self.cos_sin_cache, positions) if self.cpu_fast_path else self.cos_sin_cache
        if self.cpu_fast_path and meta.is_decode:
            k_cache = self.layers[0].self_attn.k_cache
            gather = DecodeGather.build(meta.block_tables, meta.context_lens, k_cache.shape[1], k_cache.dtype,
                                        meta.row_seqs)
            meta = replace(meta, decode_gather=gather)
        for layer in self.layers:
            x, residual = layer(x, residual, positions, rope, meta)
        x, _ = self.norm(x, residual)
        return x

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden).float()  # a module call: a packed head dequantizes per row chunk

    def bind_kv_cache(self, kv_cache: torch.Tensor, prepack_weights: bool = False) -> None:
        """``kv_cache`` is the engine's one pool ``[2, layers, blocks, block_size, kv_heads, head_dim]``.
        ``prepack_weights``: fp32 linears on the CPU fast path get a oneDNN-blocked weight copy (onednn_linear)."""
        store, decode, varlen = select_ops(kv_cache.device)
        fast = use_cpu_fast_paths(kv_cache.device)
        self.cpu_fast_path = fast
        for norm in [self.norm] + [n for layer in self.layers for n in (layer.input_layernorm, layer.post_attention_layernorm)]:
            norm.op = rms_norm_cpu if fast else rms_norm
        prepack = fast and prepack_weights and onednn_available() and self._room_for_prepacked_weights()
        for module in self.modules():
            if isinstance(module, Linear):  # packed layers (neural.quant) are not Linear and keep their own path
                module.op = linear_cpu if fast else F.linear
                if prepack and module.weight.dtype == torch.float32:
                    module.op = PrepackedLinear(module.weight)
        for i, layer in enumerate(self.layers):
            layer.mlp.act = silu_and_mul_cpu if fast else silu_and_mul
            layer.self_attn.fused_rope = fast
            layer.self_attn.k_cache = kv_cache[0, i]
            layer.self_attn.v_cache = kv_cache[1, i]
            layer.self_attn.store_kvcache, layer.self_attn.paged_attention_decode = store, decode
            layer.self_attn.paged_attention = varlen
        self.flat_decode = FlatDecode(self) if fast else None  # last: it binds the ops and views set above

    def _room_for_prepacked_weights(self) -> bool:
        weights = {m.weight.data_ptr(): m.weight for m in self.modules() if isinstance(m, Linear)}
        nbytes = sum(w.numel() * w.element_size() for w in weights.values() if w.dtype == torch.float32)
        if memory_allows_copy(nbytes):
            return True
        warnings.warn(f"cpu_prepack_weights: a second {nbytes / 2**30:.1f} GiB copy of the linear weights does not "
                      "fit in the available memory; batched linears stay on MKL", stacklevel=3)
        return False

    @torch.no_grad()
    def load_weights(self, weights, dtype: torch.dtype) -> None:
        """Consumes HF-named tensors; fuses q/k/v and gate/up as they arrive; checks nothing is missing."""
        cfg = self.config
        q, kv = cfg.num_attention_heads * cfg.head_dim, cfg.num_key_value_heads * cfg.head_dim
        inter = cfg.intermediate_size
        params = dict(self.named_parameters())
        shards = {  # HF suffix -> (our suffix, row offset, row count)
            "self_attn.q_proj": ("self_attn.qkv_proj", 0, q),
            "self_attn.k_proj": ("self_attn.qkv_proj", q, kv),
            "self_attn.v_proj": ("self_attn.qkv_proj", q + kv, kv),
            "mlp.gate_proj": ("mlp.gate_up_proj", 0, inter),
            "mlp.up_proj": ("mlp.gate_up_proj", inter, inter),
        }
        expected = {n: 0 for n in params}
        need = {n: p.shape[0] if n.endswith((".qkv_proj.weight", ".qkv_proj.bias", ".gate_up_proj.weight")) else 1
                for n, p in params.items()}
        for name, tensor in weights:
            if name.startswith("model."):
                name = name[len("model.") :]
            if "rotary_emb" in name:
                continue
            target, offset, rows = name, None, 0
            for hf, (ours, off, n) in shards.items():
                if f".{hf}." in name:
                    target, offset, rows = name.replace(hf, ours), off, n
                    break
            if target not in params:
                continue  # extra tensors (e.g. rope_freqs) are ignored on purpose
            p = params[target]
            dst = p.data if offset is None else p.data[offset : offset + rows]
            if tuple(dst.shape) != tuple(tensor.shape):
                raise ModelLoadError(f"weight {name} has shape {tuple(tensor.shape)}, expected {tuple(dst.shape)}")
            dst.copy_(tensor.to(dst.dtype))
            expected[target] += 1 if offset is None else rows
        if cfg.tie_word_embeddings and "lm_head.weight" in params:  # a packed head is tied already
            self.lm_head.weight = self.embed_tokens.weight
            expected["lm_head.weight"] = 1
        missing = [n for n, c in expected.items() if c != need[n]]
        if missing:
            raise ModelLoadError(f"checkpoint is missing weights: {missing[:5]}{' ...' if len(missing) > 5 else ''}")
        self._finish_load(dtype)

    @torch.no_grad()
    def load_state(self, state: dict[str, torch.Tensor], dtype: torch.dtype) -> None:
        """Parameters under this model's own names (``named_parameters()``: fused, no ``model.`` prefix), as
        neural.quant_int8 caches them; a tied fp32 head missing from ``state`` is tied to the embedding."""
        if self.config.tie_word_embeddings and isinstance(self.lm_head, Linear) and "lm_head.weight" not in state:
            self.lm_head.weight = self.embed_tokens.weight
        params = dict(self.named_parameters())
        missing = sorted(set(params) - set(state))
        if missing:
            raise ModelLoadError(f"cached state is missing weights: {missing[:5]}{' ...' if len(missing) > 5 else ''}")
        for name, p in params.items():
            if tuple(state[name].shape) != tuple(p.shape):
                raise ModelLoadError(f"cached {name} has shape {tuple(state[name].shape)}, expected {tuple(p.shape)}")
            p.data.copy_(state[name].to(p.dtype))
        self._finish_load(dtype)

    def _finish_load(self, dtype: torch.dtype) -> None:
        cfg = self.config
        self.to(dtype)
        device = self.norm.weight.device  # not embed_tokens: a packed one would dequantize for .weight
        self.cos_sin_cache = build_cos_sin_cache(
            cfg.head_dim, self.max_positions, cfg.rope_theta, cfg.rope_scaling, device=device
        )
