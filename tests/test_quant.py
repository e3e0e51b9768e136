"""Packed GGUF weights (neural.quant) dequantize exactly as gguf.quants does and compute what dense layers do."""
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter
from gguf.quants import dequantize, quantize
from torch import nn
from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

from neural.kernels import backend
from neural.kernels.quant_matmul import dequant_matmul_triton
from neural.quant import (
    PackedWeight,
    QuantizationError,
    QuantizedEmbedding,
    QuantizedLinear,
    gguf_packed_weights,
    pack_gguf,
    quantize_model_linears,
)

QT = GGMLQuantizationType


def _quantized(rows: int, cols: int, qtype: QT, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(raw GGUF bytes, gguf's own dequantization of them) for a random weight."""
    w = np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)
    raw = quantize(w, qtype)
    return raw, dequantize(raw, qtype).reshape(rows, cols)


@pytest.mark.parametrize("qtype", [QT.Q8_0, QT.Q4_0, QT.Q4_1])
def test_dequantize_is_bit_exact_against_gguf(qtype: QT) -> None:
    raw, ref = _quantized(7, 96, qtype, seed=int(qtype))
    pw = pack_gguf(qtype.name, raw)
    assert pw.shape == (7, 96)
    assert torch.equal(pw.dequantize(), torch.from_numpy(ref))
    assert pw.nbytes() == raw.nbytes  # packing keeps exactly the file's bytes


@pytest.mark.parametrize("qtype", [QT.Q8_0, QT.Q4_0, QT.Q4_1])
def test_quantized_linear_matches_dense_linear(qtype: QT) -> None:
    raw, ref = _quantized(40, 64, qtype, seed=3)
    bias = torch.randn(40)
    layer = QuantizedLinear(pack_gguf(qtype.name, raw), bias)
    x = torch.randn(2, 3, 64)
    torch.testing.assert_close(layer(x), x @ torch.from_numpy(ref).T + bias, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(layer.weight, torch.from_numpy(ref), atol=0, rtol=0)
    with pytest.raises(ValueError, match="input has 63 features, expected 64"):
        layer(torch.randn(2, 63))


@pytest.mark.skipif(not (backend.HAS_TRITON and backend.interpreting()), reason="needs the Triton interpreter")
@pytest.mark.parametrize("qtype,dtype", [(QT.Q8_0, torch.float32), (QT.Q4_0, torch.float16), (QT.Q4_1, torch.float32),
                                         (QT.Q4_1, torch.bfloat16)])
def test_triton_dequant_matmul_matches_dense(qtype: QT, dtype: torch.dtype) -> None:
    raw, ref = _quantized(40, 96, qtype, seed=5)  # N=40 is not a tile multiple; K=96 is 3 blocks
    pw = pack_gguf(qtype.name, raw)
    x = torch.randn(3, 96).to(dtype)
    bias = torch.randn(40).to(dtype)
    out = dequant_matmul_triton(x, pw.qtype, pw.qs, pw.d, pw.m, bias, block_m=16, block_n=32, block_k=64)
    dense = (x.double() @ torch.from_numpy(ref).double().T + bias.double())
    tol = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 1e-1}[dtype]
    assert out.dtype == dtype
    torch.testing.assert_close(out.double(), dense, atol=tol, rtol=tol)


def test_embedding_and_tied_head_share_packed_rows_and_survive_dtype_casts() -> None:
    raw, ref = _quantized(50, 32, QT.Q8_0, seed=7)
    model = nn.Module()
    model.embed_tokens = nn.Embedding(50, 32)
    model.lm_head = nn.Linear(32, 50, bias=False)
    model.lm_head.weight = model.embed_tokens.weight
    report = quantize_model_linears(model, {"embed_tokens": pack_gguf("Q8_0", raw)})
    assert report.replaced == ["embed_tokens", "lm_head"]
    assert report.packed_bytes == raw.nbytes and report.dense_bytes == 50 * 32 * 4  # the tied head counted once
    assert model.lm_head.qs is model.embed_tokens.qs
    ids = torch.tensor([[3, 49], [0, 3]])
    assert torch.equal(model.embed_tokens(ids), torch.from_numpy(ref)[ids])
    model.to(torch.float16)  # floating buffers get cast by .to(): the scales must not be
    assert torch.equal(model.embed_tokens(ids), torch.from_numpy(ref)[ids])
    with pytest.raises(ValueError, match="token id out of range"):
        model.embed_tokens(torch.tensor([50]))


def test_quantize_model_linears_rejects_bad_targets() -> None:
    raw, _ = _quantized(8, 32, QT.Q4_1, seed=1)
    model = nn.Sequential(nn.Linear(32, 8), nn.ReLU(), nn.Linear(32, 9))
    with pytest.raises(QuantizationError, match="no nn.Linear/nn.Embedding named '1'"):
        quantize_model_linears(model, {"1": pack_gguf("Q4_1", raw)})
    with pytest.raises(QuantizationError, match=r"packed shape \(8, 32\) != model weight \(9, 32\)"):
        quantize_model_linears(model, {"2": pack_gguf("Q4_1", raw)})
    with pytest.raises(QuantizationError, match="Q5_K is not supported"):
        pack_gguf("Q5_K", raw)
    with pytest.raises(QuantizationError, match="cannot fuse"):
        PackedWeight.cat([pack_gguf("Q4_1", raw), pack_gguf("Q8_0", _quantized(8, 32, QT.Q8_0, 2)[0])])


def test_gguf_file_is_packed_fused_and_unpermuted_like_transformers(tmp_path) -> None:
    n_heads, n_kv, hidden, inter = 4, 2, 64, 96
    tensors = {  # name -> (rows, cols, type); ffn_up's type differs from ffn_gate's: gate_up stays dense
        "token_embd.weight": (40, hidden, QT.Q8_0), "blk.0.attn_q.weight": (hidden, hidden, QT.Q4_1),
        "blk.0.attn_k.weight": (32, hidden, QT.Q4_1), "blk.0.attn_v.weight": (32, hidden, QT.Q4_1),
        "blk.0.attn_output.weight": (hidden, hidden, QT.Q4_0), "blk.0.ffn_gate.weight": (inter, hidden, QT.Q4_1),
        "blk.0.ffn_up.weight": (inter, hidden, QT.Q8_0), "blk.0.ffn_down.weight": (hidden, inter, QT.Q4_1),
    }
    writer = GGUFWriter(str(tmp_path / "tiny.gguf"), "llama")
    dense = {}
    for i, (name, (rows, cols, qtype)) in enumerate(tensors.items()):
        raw, dense[name] = _quantized(rows, cols, qtype, seed=10 + i)
        writer.add_tensor(name, raw, raw_dtype=qtype)
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(hidden, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    packed = gguf_packed_weights(GGUFReader(str(tmp_path / "tiny.gguf")), n_heads, n_kv)
    assert sorted(packed) == ["embed_tokens", "layers.0.mlp.down_proj", "layers.0.self_attn.o_proj",
                              "layers.0.self_attn.qkv_proj"]
    hf = LlamaTensorProcessor({"num_attention_heads": n_heads, "num_key_value_heads": n_kv})
    q = hf.process(dense["blk.0.attn_q.weight"], "blk.0.attn_q.weight").weights
    k = hf.process(dense["blk.0.attn_k.weight"], "blk.0.attn_k.weight").weights
    expected_qkv = np.concatenate([q, k, dense["blk.0.attn_v.weight"]])
    assert torch.equal(packed["layers.0.self_attn.qkv_proj"].dequantize(), torch.from_numpy(expected_qkv))
    assert torch.equal(packed["layers.0.mlp.down_proj"].dequantize(), torch.from_numpy(dense["blk.0.ffn_down.weight"]))
    emb = QuantizedEmbedding(packed["embed_tokens"])
    assert torch.equal(emb(torch.tensor([5])), torch.from_numpy(dense["token_embd.weight"][[5]]))
