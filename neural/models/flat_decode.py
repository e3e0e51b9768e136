"""The CPU decode step as one flat function over per-layer bindings made once (no module calls in a step).

A one-stream decode step of SmolLM2-135M runs ~75 small ops a layer around its 4 weight GEMMs, and on the
2-core machine each costs several times its loop cost inside a step (see cpu_ops.rotate_qk_cpu). What the
module tree adds on top -- 10 ``Module.__call__`` a layer, parameter lookups through ``Module.__getattr__``,
per-call shape checks, cache views rebuilt every call, ``Tensor.split``'s Python wrapper -- was ~1 ms of a
~9 ms forward (scratch A/B, 2 threads). Here every layer is a tuple of tensors and bound callables, and the
step is the module path's ops in the module path's order: the hidden states are bit-identical to it (tested).
Decode only (one query row per sequence), CPU fast path only; prefill and every other device keep the modules.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple, Protocol

import torch

from neural.attention_metadata import AttentionMetadata, DecodeGather
from neural.model_config import ModelConfig
from neural.models.cpu_ops import (paged_attention_decode_gathered, rms_norm_cpu, rope_cos_sin, rotate_qk_cpu,
                                   silu_and_mul_cpu)
from neural.models.int8_linear import Int8Linear, linear_one_pass, linear_residual


RowsFn = Callable[[torch.Tensor], torch.Tensor]


def rms_norm_rows(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor, eps: torch.Tensor,
                  width: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cpu_ops.rms_norm_cpu for float32 with ``eps`` and the row width as float32 0-dim tensors: the same
    arithmetic (``pow(2)`` is ``x * x``, ``mean`` is ``sum`` then ``div_``) without the three conversions of a
    Python number to a tensor that pow, mean and add_ each run (3 dispatches apiece, 61 norms a step)."""
    if residual is not None:
        x = x + residual
    inv = torch.sum(x * x, -1, keepdim=True).div_(width).add_(eps).rsqrt_()
    return (x * inv).mul_(weight), x


def _rms_norm_low_precision(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor, eps: torch.Tensor,
                            width: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return rms_norm_cpu(x, weight, float(eps), residual)  # float32 math, as the reference


class LayerBinding(NamedTuple):
    """One decoder layer as the flat step reads it: tensors and callables, unpacked once per layer."""
    input_norm: torch.Tensor
    post_norm: torch.Tensor
    eps: torch.Tensor  # 0-dim float32 (rms_norm_rows)
    qkv: RowsFn
    o: RowsFn
    gate_up: RowsFn
    down: RowsFn
    k_slots: torch.Tensor  # k_cache viewed as [slots, kv_heads, head_dim]: the KV store's index_copy_ target
    v_slots: torch.Tensor
    k_cache: torch.Tensor
    v_cache: torch.Tensor


def rows_fn(module: torch.nn.Module, dtype: torch.dtype) -> RowsFn:
    """``module(x)`` for 2-D contiguous ``x`` of the model's dtype, with the fewest Python steps to the kernel."""
    if isinstance(module, Int8Linear) and dtype == torch.float32:
        kernel = linear_residual if module.residual else linear_one_pass
        if module.bias is None:
            return partial(kernel, pieces=module.packed)
        return partial(_int8_with_bias, kernel=kernel, pieces=module.packed, bias=module.bias)
    op = getattr(module, "op", None)
    if isinstance(module, torch.nn.Linear) and callable(op):  # llama.Linear: its op bound by bind_kv_cache
        return partial(_linear, op=op, weight=module.weight, bias=module.bias)
    return module.forward  # packed GGUF layers: their own general path


def _int8_with_bias(x: torch.Tensor, kernel: Callable, pieces: list, bias: torch.Tensor) -> torch.Tensor:
    return kernel(x, pieces).add_(bias)


def _linear(x: torch.Tensor, op: Callable, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return op(x, weight, bias)


class DecoderModel(Protocol):
    """What the flat step reads of the model it flattens (neural.models.llama.LlamaForCausalLM, which builds it)."""
    config: ModelConfig
    embed_tokens: Any
    layers: Any
    norm: Any
    cos_sin_cache: torch.Tensor


class FlatDecode:
    """``model.forward`` for decode steps on the CPU fast path; built by ``bind_kv_cache`` (it holds cache views)."""

    def __init__(self, model: DecoderModel) -> None:
        cfg = model.config
        self.model = model
        self.n_heads, self.n_kv, self.head_dim = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.scale = self.head_dim**-0.5
        dtype = model.norm.weight.dtype
        self.width = torch.tensor(float(cfg.hidden_size))
        self.rms_norm = rms_norm_rows if dtype == torch.float32 else _rms_norm_low_precision
        self.final_eps = torch.tensor(model.norm.eps)
        self.layers = [self._bind(layer, dtype) for layer in model.layers]

    def _bind(self, layer, dtype: torch.dtype) -> LayerBinding:
        attn, mlp = layer.self_attn, layer.mlp
        slots = (-1, self.n_kv, self.head_dim)
        eps = torch.tensor(layer.input_layernorm.eps)
        return LayerBinding(
            layer.input_layernorm.weight, layer.post_attention_layernorm.weight, eps,
            rows_fn(attn.qkv_proj, dtype), rows_fn(attn.o_proj, dtype), rows_fn(mlp.gate_up_proj, dtype),
            rows_fn(mlp.down_proj, dtype), attn.k_cache.view(slots), attn.v_cache.view(slots),
            attn.k_cache, attn.v_cache)

    def __call__(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata) -> torch.Tensor:
        model = self.model
        heads, kv_heads, head_dim, scale = self.n_heads, self.n_kv, self.head_dim, self.scale
        rows = input_ids.shape[0]
        x = model.embed_tokens(input_ids)
        cos, sin = rope_cos_sin(model.cos_sin_cache, positions)
        first = self.layers[0].k_cache
        gather = DecodeGather.build(meta.block_tables, meta.context_lens, first.shape[1], first.dtype, meta.row_seqs)
        slot_mapping = meta.slot_mapping
        qkv_heads, qk_heads = [heads + kv_heads, kv_heads], [heads, kv_heads]
        residual, rms_norm, width = None, self.rms_norm, self.width
        for input_norm, post_norm, eps, qkv, o, gate_up, down, k_slots, v_slots, k_cache, v_cache in self.layers:
            h, residual = rms_norm(x, residual, input_norm, eps, width)
            qk, v = qkv(h).view(rows, heads + 2 * kv_heads, head_dim).split_with_sizes(qkv_heads, 1)
            q, k = rotate_qk_cpu(qk, cos, sin).split_with_sizes(qk_heads, 1)
            if k.dtype != k_slots.dtype:
                k, v = k.to(k_slots.dtype), v.to(v_slots.dtype)
            k_slots.index_copy_(0, slot_mapping, k)
            v_slots.index_copy_(0, slot_mapping, v)
            attended = paged_attention_decode_gathered(q, k_cache, v_cache, gather, scale)
            h, residual = rms_norm(o(attended.reshape(rows, heads * head_dim)), residual, post_norm, eps, width)
            x = down(silu_and_mul_cpu(gate_up(h)))
        x, _ = rms_norm(x, residual, model.norm.weight, self.final_eps, width)
        return x

