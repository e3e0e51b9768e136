"""EngineConfig(quantization="gguf"): GGUF weights stay packed in the engine, compute what the dense load does."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

from api.cli import main
from engine_tiny_models import make_tiny_model
from neural import Engine, EngineConfig, EngineError, ModelLoadError, SamplingParams, UnsupportedModelError
from neural.loader import load_model
from neural.model_runner import ModelRunner
from neural.quant import QuantizedEmbedding, QuantizedLinear, weight_bytes
from neural.sampling_params import SamplingParams as SP
from neural.sequence import Sequence

QT = GGMLQuantizationType
HIDDEN, INTER, VOCAB, N_HEADS, N_KV, LAYERS = 64, 96, 64, 4, 2, 2




def write_tiny_gguf(path, arch: str = "llama", types: dict[str, QT] | None = None) -> str:
    """A random 2-layer model; ``types`` overrides a tensor kind's type (default Q4_1, embedding Q8_0)."""
    types = types or {}
    rng = np.random.default_rng(0)
    w = GGUFWriter(str(path), arch)
    w.add_block_count(LAYERS)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(INTER)
    w.add_head_count(N_HEADS)
    w.add_head_count_kv(N_KV)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_context_length(128)
    w.add_vocab_size(VOCAB)

    def add(name: str, rows: int, cols: int, qtype: QT) -> None:
        data = (rng.standard_normal((rows, cols)) * 0.2).astype(np.float32)
        if qtype == QT.F32:
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, quantize(data, qtype), raw_dtype=qtype)

    kv = HIDDEN // N_HEADS * N_KV
    add("token_embd.weight", VOCAB, HIDDEN, types.get("token_embd", QT.Q8_0))
    if arch == "qwen2":  # untied head of its own type, and q/k/v biases
        add("output.weight", VOCAB, HIDDEN, types.get("output", QT.Q8_0))
    w.add_tensor("output_norm.weight", (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
    shapes = {"attn_q": (HIDDEN, HIDDEN), "attn_k": (kv, HIDDEN), "attn_v": (kv, HIDDEN),
              "attn_output": (HIDDEN, HIDDEN), "ffn_gate": (INTER, HIDDEN), "ffn_up": (INTER, HIDDEN),
              "ffn_down": (HIDDEN, INTER)}
    for i in range(LAYERS):
        for kind, (rows, cols) in shapes.items():
            add(f"blk.{i}.{kind}.weight", rows, cols, types.get(kind, QT.Q4_1))
        for norm in ("attn_norm", "ffn_norm"):
            w.add_tensor(f"blk.{i}.{norm}.weight", (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
        if arch == "qwen2":
            for kind in ("attn_q", "attn_k", "attn_v"):
                w.add_tensor(f"blk.{i}.{kind}.bias", (0.1 * rng.standard_normal(shapes[kind][0])).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


def runner_for(path: str, quantization: str | None) -> ModelRunner:
    loaded = load_model(path, quantization)
    return ModelRunner(loaded.config, loaded.weights, torch.float32, torch.device("cpu"), 4, 16, 64,
                       packed=loaded.packed)


def greedy(runner: ModelRunner, prompt: list[int], steps: int) -> tuple[list[int], list[torch.Tensor]]:
    """Prefill then decode one token at a time through the runner; returns tokens and every step's logits."""
    seq = Sequence("r", None, list(prompt), SP())
    seq.block_table = list(range(16))
    tokens, logits = [], []
    n = len(prompt)
    for _ in range(steps):
        out = runner.run([seq], [n])[0]
        seq.num_computed_tokens += n
        logits.append(out)
        tokens.append(int(out.argmax()))
        seq.token_ids.append(tokens[-1])
        n = 1
    return tokens, logits


@pytest.mark.parametrize("arch,types", [
    ("llama", {}),  # tied head follows the Q8_0 embedding
    ("qwen2", {"attn_output": QT.Q4_0, "ffn_down": QT.Q8_0, "output": QT.Q4_0}),  # biases, untied head
])
def test_packed_runner_matches_dense_load(tmp_path, arch, types) -> None:
    path = write_tiny_gguf(tmp_path / "tiny.gguf", arch, types)
    dense, packed = runner_for(path, None), runner_for(path, "gguf")
    model = packed.model
    assert isinstance(model.embed_tokens, QuantizedEmbedding) and isinstance(model.lm_head, QuantizedLinear)
    layer = model.layers[0]
    for mod in (layer.self_attn.qkv_proj, layer.self_attn.o_proj, layer.mlp.gate_up_proj, layer.mlp.down_proj):
        assert isinstance(mod, QuantizedLinear)
    assert layer.mlp.down_proj.qtype == types.get("ffn_down", QT.Q4_1).name
    if arch == "llama":
        assert model.lm_head.qs is model.embed_tokens.qs  # one packed copy for a tied head
    else:
        torch.testing.assert_close(layer.self_attn.qkv_proj.bias, dense.model.layers[0].self_attn.qkv_proj.bias,
                                   atol=0, rtol=0)
    assert weight_bytes(model) < 0.4 * weight_bytes(dense.model)
    prompt = [5, 17, 3, 40, 22, 9, 61]
    ref_tokens, ref_logits = greedy(dense, prompt, 6)
    tokens, logits = greedy(packed, prompt, 6)
    assert tokens == ref_tokens
    for a, b in zip(logits, ref_logits):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_packed_load_never_yields_the_quantized_tensors_densely(tmp_path) -> None:
    loaded = load_model(write_tiny_gguf(tmp_path / "tiny.gguf"), "gguf")
    names = [name for name, _ in loaded.weights]
    assert sorted(names) == sorted(
        ["model.norm.weight"]
        + [f"model.layers.{i}.{n}.weight" for i in range(LAYERS) for n in ("input_layernorm", "post_attention_layernorm")]
    )
    assert "embed_tokens" in loaded.packed and "layers.1.mlp.gate_up_proj" in loaded.packed


def test_mixed_types_in_one_fused_projection_stay_dense(tmp_path) -> None:
    path = write_tiny_gguf(tmp_path / "tiny.gguf", types={"ffn_up": QT.Q8_0})  # gate Q4_1, up Q8_0
    dense, packed = runner_for(path, None), runner_for(path, "gguf")
    assert isinstance(packed.model.layers[0].mlp.gate_up_proj, torch.nn.Linear)
    assert isinstance(packed.model.layers[0].mlp.down_proj, QuantizedLinear)
    prompt = [1, 2, 3, 4]
    assert greedy(packed, prompt, 4)[0] == greedy(dense, prompt, 4)[0]


def test_unsupported_tensor_type_is_a_clear_error(tmp_path) -> None:
    path = write_tiny_gguf(tmp_path / "q5.gguf", types={"attn_output": QT.Q5_0})
    with pytest.raises(UnsupportedModelError, match=r"blk\.0\.attn_output\.weight .* is Q5_0, which cannot stay packed"):
        load_model(path, "gguf")
    assert runner_for(path, None).model is not None  # the dense load still handles it


def test_float_only_gguf_has_nothing_to_pack(tmp_path) -> None:
    path = write_tiny_gguf(tmp_path / "f32.gguf", types={k: QT.F32 for k in (
        "token_embd", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")})
    with pytest.raises(UnsupportedModelError, match="no Q8_0/Q4_0/Q4_1 weight tensors to keep packed"):
        load_model(path, "gguf")


def test_bad_quantization_options(tmp_path) -> None:
    with pytest.raises(EngineError, match=r"quantization must be None or one of \['auto', 'none', 'gguf', 'int8', 'int8-fast'\], got 'int4'"):
        EngineConfig(quantization="int4")
    folder = make_tiny_model(tmp_path / "hf", "llama")
    with pytest.raises(ModelLoadError, match="quantization='gguf' needs a .gguf model file"):
        Engine(EngineConfig(model=str(folder), device="cpu", quantization="gguf"))


def test_cli_quantization_flag_errors(tmp_path, capsys) -> None:
    folder = make_tiny_model(tmp_path / "hf", "llama")
    assert main(["generate", "w5 w6", "--raw", "--model", str(folder), "--quantization", "gguf"]) == 1
    assert "needs a .gguf model file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["generate", "hi", "--quantization", "int4"])
    assert "invalid choice: 'int4'" in capsys.readouterr().err


@pytest.mark.parametrize("qtype", [QT.Q8_0, QT.Q4_0, QT.Q4_1])
def test_cpu_packed_matmul_over_several_scratch_chunks(monkeypatch, qtype) -> None:
    from gguf.quants import dequantize

    from neural import quant_cpu
    from neural.quant import pack_gguf

    rng = np.random.default_rng(int(qtype))
    raw = quantize(rng.standard_normal((50, 96)).astype(np.float32), qtype)
    ref = torch.from_numpy(dequantize(raw, qtype).reshape(50, 96)).double()
    pw = pack_gguf(qtype.name, raw)
    monkeypatch.setattr(quant_cpu, "CHUNK_ELEMENTS", 96 * 16)  # 16 rows a chunk: 4 chunks, the last partial
    x = torch.randn(3, 200)[:, 7:103]  # a non-contiguous view
    bias = torch.randn(50)
    quant_cpu._scratch.__dict__.clear()
    with torch.inference_mode():  # the engine's mode allocates the scratch; later plain calls still write it
        quant_cpu.packed_linear_cpu(x, pw.qtype, pw.qs, pw.d, pw.m)
    out = quant_cpu.packed_linear_cpu(x, pw.qtype, pw.qs, pw.d, pw.m, bias)
    torch.testing.assert_close(out.double(), x.double() @ ref.T + bias.double(), atol=1e-4, rtol=1e-4)
    assert quant_cpu.packed_linear_cpu(torch.empty(0, 96), pw.qtype, pw.qs, pw.d, pw.m).shape == (0, 50)


@pytest.mark.slow
def test_default_model_packed_engine_matches_dense_engine_at_a_fifth_of_the_memory() -> None:
    prompts = ["The capital of France is", "def fibonacci(n):", "你好，世界！ Translate to English:"]
    sp = SamplingParams(max_tokens=16, temperature=0.0, ignore_eos=True)
    small_kv = 4 * 1024 * 1024
    packed = Engine(EngineConfig(device="cpu", quantization="gguf", kv_cache_bytes=small_kv))
    got = [o.token_ids for o in packed.generate(prompts, sp)]
    packed_bytes = weight_bytes(packed.runner.model)
    del packed
    dense = Engine(EngineConfig(device="cpu", quantization="none", kv_cache_bytes=small_kv))
    want = [o.token_ids for o in dense.generate(prompts, sp)]
    dense_bytes = weight_bytes(dense.runner.model)
    assert got == want
    assert all(len(t) == 16 for t in got)
    assert packed_bytes <= dense_bytes / 2
    assert packed_bytes < 0.2 * dense_bytes  # Q4_1 layers + Q8_0 embedding: ~18% of float32
