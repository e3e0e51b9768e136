"""GGUF-quantized weights kept packed in memory (Q8_0 / Q4_0 / Q4_1), dequantized on the fly per forward."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neural.kernels.backend import use_triton
from neural.kernels.quant_matmul import QTYPES, dequant_matmul_triton, dequantize_ref
from neural.quant_cpu import packed_linear_cpu

# bytes of one 32-weight block, and where its fields start: (block bytes, d offset, m offset, qs offset)
_LAYOUT = {"Q8_0": (34, 0, None, 2), "Q4_0": (18, 0, None, 2), "Q4_1": (20, 0, 2, 4)}
_CPU_ROW_CHUNK = 8192  # rows dequantized at a time on the reference path: bounds the transient fp32 copy


class QuantizationError(ValueError):
    """A tensor cannot be packed (unsupported GGUF type, bad shape)."""


@dataclass
class PackedWeight:
    """One ``[out_features, in_features]`` weight in GGUF block form (see neural.kernels.quant_matmul)."""

    qtype: str
    qs: torch.Tensor  # int8 [N, K/32, 32] (Q8_0) or uint8 [N, K/32, 16] (Q4_*)
    d: torch.Tensor  # float16 [N, K/32]
    m: torch.Tensor | None = None  # float16 [N, K/32], Q4_1 only

    @property
    def shape(self) -> tuple[int, int]:
        return self.qs.shape[0], self.qs.shape[1] * 32

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.qs, self.d, self.m) if t is not None)

    def rows(self, index: torch.Tensor) -> "PackedWeight":
        """Row gather: permutes rows (Q/K un-permutation) or picks embedding rows, staying packed."""
        return PackedWeight(self.qtype, self.qs[index], self.d[index], None if self.m is None else self.m[index])

    def dequantize(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return dequantize_ref(self.qtype, self.qs, self.d, self.m, dtype)

    @staticmethod
    def cat(parts: list["PackedWeight"]) -> "PackedWeight":
        """Stack along out_features (fused qkv / gate_up projections); all parts must share type and K."""
        if len({p.qtype for p in parts}) != 1 or len({p.shape[1] for p in parts}) != 1:
            raise QuantizationError(f"cannot fuse {[(p.qtype, p.shape) for p in parts]}: types or widths differ")
        # one qtype: every part carries m, or none does
        m = None if parts[0].m is None else torch.cat([p.m for p in parts if p.m is not None])
        return PackedWeight(parts[0].qtype, torch.cat([p.qs for p in parts]), torch.cat([p.d for p in parts]), m)


def pack_gguf(qtype: str, data: np.ndarray) -> PackedWeight:
    """GGUF raw bytes ``uint8 [rows, bytes_per_row]`` (``GGUFReader.tensors[i].data``) -> PackedWeight."""
    if qtype not in _LAYOUT:
        raise QuantizationError(f"GGUF type {qtype} is not supported for packed weights; supported: {', '.join(QTYPES)}")
    size, d_off, m_off, qs_off = _LAYOUT[qtype]
    raw = np.ascontiguousarray(data, dtype=np.uint8)
    if raw.ndim != 2 or raw.shape[1] % size:
        raise QuantizationError(f"{qtype} data must be uint8 [rows, k*{size}] bytes, got shape {raw.shape}")
    blocks = raw.reshape(raw.shape[0], -1, size)
    d = torch.from_numpy(np.ascontiguousarray(blocks[..., d_off : d_off + 2]).view(np.float16)[..., 0])
    m = None
    if m_off is not None:
        m = torch.from_numpy(np.ascontiguousarray(blocks[..., m_off : m_off + 2]).view(np.float16)[..., 0])
    qs = np.ascontiguousarray(blocks[..., qs_off:])
    qs_t = torch.from_numpy(qs.view(np.int8) if qtype == "Q8_0" else qs)
    return PackedWeight(qtype, qs_t, d, m)


class _Packed(nn.Module):
    """Holds a PackedWeight as buffers; scales are stored as int16 bit patterns so ``module.to(dtype)`` cannot
    round them (it converts floating buffers only)."""

    qs: torch.Tensor  # buffers (register_buffer), declared for the type checker
    d_bits: torch.Tensor
    m_bits: torch.Tensor | None

    def __init__(self, packed: PackedWeight, dtype: torch.dtype) -> None:
        super().__init__()
        self.qtype = packed.qtype
        self.compute_dtype = dtype
        self.register_buffer("qs", packed.qs)
        self.register_buffer("d_bits", packed.d.view(torch.int16))
        self.register_buffer("m_bits", None if packed.m is None else packed.m.view(torch.int16))

    @property
    def packed(self) -> PackedWeight:
        m = None if self.m_bits is None else self.m_bits.view(torch.float16)
        return PackedWeight(self.qtype, self.qs, self.d_bits.view(torch.float16), m)

    @property
    def weight(self) -> torch.Tensor:
        """The dense weight, dequantized now (for code that reads ``.weight``, e.g. a tied LM head)."""
        return self.packed.dequantize(self.compute_dtype)


class QuantizedLinear(_Packed):
    """``nn.Linear`` replacement: y = x W^T + b with W packed; the Triton kernel on CUDA, dequant + matmul else."""

    def __init__(self, packed: PackedWeight, bias: torch.Tensor | None = None, dtype: torch.dtype = torch.float32):
        super().__init__(packed, dtype)
        self.out_features, self.in_features = packed.shape
        self.bias = None if bias is None else nn.Parameter(bias.detach().to(dtype), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.in_features:
            raise ValueError(f"QuantizedLinear: input has {x.shape[-1]} features, expected {self.in_features}")
        p = self.packed
        if use_triton(x):
            return dequant_matmul_triton(x, p.qtype, p.qs, p.d, p.m, self.bias)
        if x.device.type == "cpu" and x.dtype == torch.float32:
            return packed_linear_cpu(x, p.qtype, p.qs, p.d, p.m, self.bias)
        out = torch.empty(*x.shape[:-1], self.out_features, dtype=x.dtype, device=x.device)
        for r0 in range(0, self.out_features, _CPU_ROW_CHUNK):
            idx = slice(r0, r0 + _CPU_ROW_CHUNK)
            w = dequantize_ref(p.qtype, p.qs[idx], p.d[idx], None if p.m is None else p.m[idx], x.dtype)
            out[..., idx] = F.linear(x, w, None if self.bias is None else self.bias[idx].to(x.dtype))
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, qtype={self.qtype}"


class QuantizedEmbedding(_Packed):
    """``nn.Embedding`` replacement: dequantizes only the looked-up rows."""

    def __init__(self, packed: PackedWeight, dtype: torch.dtype = torch.float32) -> None:
        super().__init__(packed, dtype)
        self.num_embeddings, self.embedding_dim = packed.shape

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        flat = ids.reshape(-1).long()
        # the range check reads the ids on the host: skipped while a CUDA graph is being captured (a host
        # sync would break the capture); the engine validated every token id when the request came in
        capturing = flat.is_cuda and torch.cuda.is_current_stream_capturing()
        if flat.numel() and not capturing and (int(flat.min()) < 0 or int(flat.max()) >= self.num_embeddings):
            raise ValueError(f"QuantizedEmbedding: token id out of range [0, {self.num_embeddings})")
        return self.packed.rows(flat).dequantize(self.compute_dtype).view(*ids.shape, self.embedding_dim)


_GGUF_LAYER = re.compile(r"^blk\.(\d+)\.(attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down)\.weight$")
# GGUF name -> (module in neural.models.llama, shard order inside a fused projection)
_FUSED = {"attn_q": ("self_attn.qkv_proj", 0), "attn_k": ("self_attn.qkv_proj", 1), "attn_v": ("self_attn.qkv_proj", 2),
          "attn_output": ("self_attn.o_proj", 0), "ffn_gate": ("mlp.gate_up_proj", 0), "ffn_up": ("mlp.gate_up_proj", 1),
          "ffn_down": ("mlp.down_proj", 0)}


def unpermute_rows(n_rows: int, n_head: int) -> torch.Tensor:
    """Row order that undoes llama.cpp's Q/K permutation (interleaved -> rotate-half RoPE), as an index."""
    dim = n_rows // n_head // 2
    return torch.arange(n_rows).reshape(n_head, dim, 2).transpose(1, 2).reshape(n_rows)


def gguf_packed_weights(source, n_heads: int, n_kv_heads: int) -> dict[str, PackedWeight]:
    """Packed weights of a Llama/Qwen2 GGUF (a path, a GGUFFile or a ``gguf.GGUFReader``), keyed by module name in ``neural.models.llama.LlamaForCausalLM``.

    Projections whose parts are not all of a supported type (or disagree in type) are left out: they stay dense.
    """
    from neural.gguf_file import gguf_field, open_gguf

    # a loader passes the header it has already parsed (a GGUFFile or a gguf.GGUFReader)
    reader = source if hasattr(source, "tensors") else open_gguf(source)
    arch = gguf_field(reader, "general.architecture")
    shards: dict[str, dict[int, PackedWeight | None]] = {}
    out: dict[str, PackedWeight] = {}
    for t in reader.tensors:
        qtype = t.tensor_type.name
        packed = pack_gguf(qtype, t.data) if qtype in _LAYOUT else None
        if t.name in ("token_embd.weight", "output.weight"):
            if packed is not None:
                out["embed_tokens" if t.name == "token_embd.weight" else "lm_head"] = packed
            continue
        match = _GGUF_LAYER.match(t.name)
        if not match:
            continue
        layer, kind = match.groups()
        if packed is not None and arch == "llama" and kind in ("attn_q", "attn_k"):
            packed = packed.rows(unpermute_rows(packed.shape[0], n_heads if kind == "attn_q" else n_kv_heads))
        module, order = _FUSED[kind]
        shards.setdefault(f"layers.{layer}.{module}", {})[order] = packed
    for name, parts in shards.items():
        ordered = [parts[i] for i in sorted(parts)]
        present = [p for p in ordered if p is not None]
        if len(present) == len(ordered) and len({p.qtype for p in present}) == 1:
            out[name] = present[0] if len(present) == 1 else PackedWeight.cat(present)
    return out


@dataclass
class QuantReport:
    replaced: list[str]
    dense_bytes: int  # what the replaced weights took before
    packed_bytes: int  # what they take now


def quantize_model_linears(model: nn.Module, packed: dict[str, PackedWeight]) -> QuantReport:
    """Swap ``nn.Linear`` / ``nn.Embedding`` submodules named in ``packed`` for packed versions, in place.

    Run it after the dense weights are loaded (biases are carried over). A tied LM head (``lm_head.weight is
    embed_tokens.weight``) follows the embedding and shares its packed buffers.
    """
    modules = dict(model.named_modules())
    tied = {n for n in ("lm_head",) if n in modules and "embed_tokens" in modules
            and getattr(modules[n], "weight", None) is getattr(modules["embed_tokens"], "weight", 0)}
    if "embed_tokens" in packed:
        packed = {**packed, **{n: packed["embed_tokens"] for n in tied if n not in packed}}
    replaced, dense, small = [], 0, 0
    moved: dict[tuple[int, str], PackedWeight] = {}  # one device copy per packed weight: tied heads share it
    for name, pw in packed.items():
        old = modules.get(name)
        if not isinstance(old, (nn.Linear, nn.Embedding)):
            raise QuantizationError(f"model has no nn.Linear/nn.Embedding named {name!r}")
        if tuple(old.weight.shape) != pw.shape:
            raise QuantizationError(f"{name}: packed shape {pw.shape} != model weight {tuple(old.weight.shape)}")
        device, dtype = old.weight.device, old.weight.dtype
        key = (id(pw), str(device))
        if key not in moved:
            moved[key] = PackedWeight(pw.qtype, pw.qs.to(device), pw.d.to(device),
                                      None if pw.m is None else pw.m.to(device))
        if isinstance(old, nn.Embedding):
            new: nn.Module = QuantizedEmbedding(moved[key], dtype)
        else:
            new = QuantizedLinear(moved[key], old.bias, dtype)
        parent_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, attr, new)
        replaced.append(name)
        if name not in tied:  # a tied head's bytes were the embedding's, counted once
            dense += old.weight.numel() * old.weight.element_size()
            small += pw.nbytes()
    return QuantReport(replaced, dense, small)


def quantize_gguf_model(model: nn.Module, source, n_heads: int, n_kv_heads: int) -> QuantReport:
    """The loader's one call: pack every supported weight of the GGUF (path or reader) into ``model``."""
    return quantize_model_linears(model, gguf_packed_weights(source, n_heads, n_kv_heads))


def weight_bytes(model: nn.Module) -> int:
    """Bytes of every distinct parameter/buffer storage (a tied head counts once): what "weight memory"
    means when packed and dense models are compared."""
    seen, total = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if t.numel() and t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            total += t.numel() * t.element_size()
    return total
