"""Loads a GGUF file: metadata -> ModelConfig, tensors dequantized with the gguf package (or kept packed), HF names."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import torch

from neural.errors import ModelLoadError, UnsupportedModelError
from neural.gguf_file import GGUFFile, gguf_field
from neural.loader.loaded import WeightIter
from neural.model_config import ModelConfig

_LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
_GLOBAL_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}
_BLK = re.compile(r"^blk\.(\d+)\.(\w+)\.(weight|bias)$")
_DENSE_TYPES = ("F32", "F16", "BF16")  # read as plain floats; anything else is a quantized block format
# HF projection -> the fused module of neural.models.llama that holds it
_FUSED_MODULE = {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj",
                 "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj"}


def hf_name(gguf_name: str) -> str | None:
    if gguf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[gguf_name]
    m = _BLK.match(gguf_name)
    if m and m.group(2) in _LAYER_NAMES:
        return f"model.layers.{m.group(1)}.{_LAYER_NAMES[m.group(2)]}.{m.group(3)}"
    return None


def model_module(hf: str) -> str | None:
    """HF weight name -> the module of LlamaForCausalLM that owns it (``None`` for biases)."""
    if not hf.endswith(".weight"):
        return None
    parts = hf.removeprefix("model.").removesuffix(".weight").split(".")
    return ".".join(_FUSED_MODULE.get(part, part) for part in parts)


def pack_quantized(reader, path: Path, n_heads: int, n_kv: int) -> dict:
    """The file's quantized projection/embedding tensors, packed; errors on a block type we cannot keep packed."""
    from neural.kernels.quant_matmul import QTYPES
    from neural.quant import gguf_packed_weights

    for t in reader.tensors:
        kind = t.tensor_type.name
        if hf_name(t.name) is not None and kind not in _DENSE_TYPES and kind not in QTYPES:
            raise UnsupportedModelError(
                f"quantization='gguf': tensor {t.name} of {path} is {kind}, which cannot stay packed "
                f"(supported: {', '.join(QTYPES)}); load without quantization to dequantize it"
            )
    packed = gguf_packed_weights(reader, n_heads, n_kv)
    if not packed:
        raise UnsupportedModelError(
            f"quantization='gguf': {path} has no {'/'.join(QTYPES)} weight tensors to keep packed "
            "(its weights are plain floats); load it without quantization"
        )
    return packed


def unpermute_qk(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's convert-time Q/K row permutation (interleaved -> rotate-half RoPE layout)."""
    dim = w.shape[0] // n_head // 2
    return w.reshape(n_head, dim, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def read_config(reader: GGUFFile, path: Path) -> ModelConfig:
    arch = gguf_field(reader, "general.architecture")
    if arch not in ("llama", "qwen2"):
        raise UnsupportedModelError(f"unsupported GGUF architecture {arch!r} in {path}; supported: llama, qwen2")

    def meta(key: str, default=None):
        v = gguf_field(reader, f"{arch}.{key}", default)
        if v is None:
            raise ModelLoadError(f"GGUF {path} lacks metadata {arch}.{key}")
        return v

    names = {t.name for t in reader.tensors}
    n_heads = int(meta("attention.head_count"))
    hidden = int(meta("embedding_length"))
    tokens = gguf_field(reader, "tokenizer.ggml.tokens") or []
    if gguf_field(reader, f"{arch}.rope.scaling.type") not in (None, "none"):
        raise UnsupportedModelError(f"GGUF rope scaling is not supported ({path})")
    eos = gguf_field(reader, "tokenizer.ggml.eos_token_id")
    return ModelConfig(
        arch=arch,
        vocab_size=int(gguf_field(reader, f"{arch}.vocab_size", len(tokens))),
        hidden_size=hidden,
        intermediate_size=int(meta("feed_forward_length")),
        num_hidden_layers=int(meta("block_count")),
        num_attention_heads=n_heads,
        num_key_value_heads=int(meta("attention.head_count_kv", n_heads)),
        head_dim=int(gguf_field(reader, f"{arch}.rope.dimension_count", hidden // n_heads)),
        rms_norm_eps=float(meta("attention.layer_norm_rms_epsilon")),
        rope_theta=float(gguf_field(reader, f"{arch}.rope.freq_base", 10000.0)),
        max_position_embeddings=int(meta("context_length")),
        tie_word_embeddings="output.weight" not in names,
        attention_bias="blk.0.attn_q.bias" in names,
        eos_token_ids=[] if eos is None else [int(eos)],
        bos_token_id=gguf_field(reader, "tokenizer.ggml.bos_token_id"),
    )


def dense_weights(reader: GGUFFile, config: ModelConfig, path: Path, skip_modules=()) -> WeightIter:
    """HF-named float32 tensors, dequantized one at a time (numpy, in gguf-py): those of ``skip_modules``
    (kept packed) are left out."""
    from gguf.quants import dequantize

    for t in reader.tensors:
        name = hf_name(t.name)
        if name is None or model_module(name) in skip_modules:
            continue
        try:
            arr = dequantize(t.data, t.tensor_type)
        except Exception as exc:
            raise ModelLoadError(f"cannot dequantize {t.name} ({t.tensor_type.name}) in {path}: {exc}") from exc
        arr = np.asarray(arr, dtype=np.float32).reshape([int(d) for d in reversed(t.shape)])
        if config.arch == "llama" and ".q_proj." in name:
            arr = unpermute_qk(arr, config.num_attention_heads)
        elif config.arch == "llama" and ".k_proj." in name:
            arr = unpermute_qk(arr, config.num_key_value_heads)
        if not arr.flags.writeable:  # F32 tensors come back as read-only views of the memmap
            arr = arr.copy()
        yield name, torch.from_numpy(np.ascontiguousarray(arr))
