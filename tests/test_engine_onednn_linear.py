"""oneDNN-prepacked CPU linears: values against F.linear, the width policy, the layout check, and where they bind."""
from __future__ import annotations

import time

import pytest
import torch
import torch.nn.functional as F

from neural.models import onednn_linear
from neural.models.onednn_linear import MAX_ROWS, PrepackedLinear, conv_columns, onednn_available

needs_onednn = pytest.mark.skipif(not onednn_available(), reason="this torch build has no oneDNN (mkldnn)")


def test_columns_are_four_or_multiples_of_eight():
    assert [conv_columns(r) for r in (1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 200, 224)] == \
        [4, 4, 4, 4, 8, 8, 8, 16, 16, 24, 200, 224]


@needs_onednn
@pytest.mark.parametrize("bias", [False, True])
def test_prepacked_linear_matches_f_linear_at_every_row_count(bias):
    torch.manual_seed(0)
    w = torch.randn(72, 40)
    b = torch.randn(72) if bias else None
    op = PrepackedLinear(w)
    for rows in list(range(1, 19)) + [63, 64, 65, MAX_ROWS, MAX_ROWS + 1, 300]:
        x = torch.randn(rows, 40)
        got = op(x, w, b)
        assert got.shape == (rows, 72) and got.is_contiguous()
        torch.testing.assert_close(got, F.linear(x, w, b), rtol=1e-5, atol=1e-5)


@needs_onednn
def test_padding_rows_do_not_change_the_real_rows():
    torch.manual_seed(1)
    w, x = torch.randn(48, 32), torch.randn(5, 32)  # 5 rows run as 8 columns, 2 of them as 4
    op = PrepackedLinear(w)
    torch.testing.assert_close(op(x[:2], w), op(x, w)[:2], rtol=1e-6, atol=1e-6)


@needs_onednn
def test_another_weight_or_dtype_goes_to_the_plain_cpu_linear():
    torch.manual_seed(2)
    w, other, x = torch.randn(24, 16), torch.randn(24, 16), torch.randn(6, 16)
    op = PrepackedLinear(w)
    torch.testing.assert_close(op(x, other), F.linear(x, other), rtol=1e-5, atol=1e-5)  # not the packed copy
    got = op(x.double(), w.double())
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, F.linear(x.double(), w.double()))


@needs_onednn
def test_a_width_whose_layout_misfits_stays_on_mkl(monkeypatch):
    """A convolution >= 4x slower than MKL's GEMM at its first call (what a per-call weight reorder costs) is
    judged a misfit once; that width then runs on MKL and still gives the right values."""
    monkeypatch.setattr(onednn_linear, "_LAYOUT_FITS", {})
    torch.manual_seed(3)
    w = torch.randn(40, 24)
    op = PrepackedLinear(w)
    convolve, calls = op._convolve, []

    def slow_convolve(x):
        calls.append(x.shape[0])
        time.sleep(0.02)
        return convolve(x)

    monkeypatch.setattr(op, "_convolve", slow_convolve)
    x = torch.randn(12, 24)  # 16 columns
    torch.testing.assert_close(op(x, w), F.linear(x, w), rtol=1e-5, atol=1e-5)
    assert onednn_linear._LAYOUT_FITS == {(40, 24, 16, torch.get_num_threads()): False}
    assert calls == [16, 16]  # the kernel build and the timed call; the result came from MKL
    torch.testing.assert_close(op(x, w), F.linear(x, w), rtol=1e-5, atol=1e-5)
    assert calls == [16, 16]  # decided once per (shape, columns, threads)


@needs_onednn
def test_the_layout_check_compares_one_timed_convolution_with_one_gemm(monkeypatch):
    """A fake clock makes the verdicts exact: the convolution at 3x MKL's time fits, at 5x (and 0.1 ms over) not."""
    torch.manual_seed(4)
    w, x = torch.randn(40, 24), torch.randn(3, 24)
    for conv_s, expected in ((0.003, True), (0.0052, False)):
        monkeypatch.setattr(onednn_linear, "_LAYOUT_FITS", {})
        ticks = iter([0.0, conv_s, 1.0, 1.001])  # timed convolution, then the GEMM (1 ms)
        monkeypatch.setattr(onednn_linear, "perf_counter", lambda: next(ticks))
        op = PrepackedLinear(w)
        torch.testing.assert_close(op(x, w), F.linear(x, w), rtol=1e-5, atol=1e-5)
        assert onednn_linear._LAYOUT_FITS == {(40, 24, 4, torch.get_num_threads()): expected}
        assert next(ticks, "spent") == "spent"  # measured once: the clock was read exactly four times


def _tiny_model(dtype=torch.float32):
    from neural.model_config import ModelConfig
    from neural.models.llama import LlamaForCausalLM

    cfg = ModelConfig(arch="llama", vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6,
                      rope_theta=10000.0, max_position_embeddings=64, tie_word_embeddings=False,
                      attention_bias=False)
    return LlamaForCausalLM(cfg, 64).to(dtype)


@needs_onednn
def test_bind_prepacks_fp32_cpu_linears_only_when_asked(monkeypatch):
    from neural.models.cpu_ops import linear_cpu
    from neural.models.llama import Linear

    model = _tiny_model()
    linears = [m for m in model.modules() if isinstance(m, Linear)]
    model.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8), prepack_weights=True)
    assert all(isinstance(m.op, PrepackedLinear) and m.op.weight is m.weight for m in linears)
    model.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8))
    assert all(m.op is linear_cpu for m in linears)
    monkeypatch.setenv("VERIRAG_KERNELS", "reference")  # forced kernels: plain F.linear, nothing packed
    model.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8), prepack_weights=True)
    assert all(m.op is F.linear for m in linears)
    monkeypatch.delenv("VERIRAG_KERNELS")
    bf16 = _tiny_model(torch.bfloat16)
    bf16.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8, dtype=torch.bfloat16), prepack_weights=True)
    assert all(m.op is linear_cpu for m in bf16.modules() if isinstance(m, Linear))


def test_engine_config_rejects_a_non_bool_prepack_flag():
    from neural import EngineConfig
    from neural.errors import EngineError

    with pytest.raises(EngineError, match="cpu_prepack_weights must be True or False"):
        EngineConfig(cpu_prepack_weights="yes")


@needs_onednn
@pytest.mark.parametrize("arch", ["llama", "qwen2"])  # qwen2: the QKV bias rides on the convolution's output
def test_engine_batches_through_prepacked_linears_and_matches_hf(tmp_path, arch):
    from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model
    from neural import Engine, EngineConfig, SamplingParams

    folder = make_tiny_model(tmp_path / arch, arch, seed=7, num_hidden_layers=2)
    eng = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20))
    ops = [layer.mlp.down_proj.op for layer in eng.runner.model.layers] + [eng.runner.model.lm_head.op]
    assert all(isinstance(op, PrepackedLinear) for op in ops)
    prompts = [[1, 5, 6, 7, 8, 9], [1, 30, 31], [1, 12, 13, 14], [1, 40], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]
    outs = eng.generate(prompts, SamplingParams(max_tokens=8, ignore_eos=True))  # 5 rows -> 8 columns
    hf = load_hf_reference(folder)
    assert [o.token_ids for o in outs] == [hf_greedy(hf, p, 8) for p in prompts]
    plain = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20, cpu_prepack_weights=False))
    assert not isinstance(plain.runner.model.lm_head.op, PrepackedLinear)
    assert [o.token_ids for o in plain.generate(prompts, SamplingParams(max_tokens=8, ignore_eos=True))] == \
        [o.token_ids for o in outs]


@needs_onednn
def test_no_prepacking_when_the_copy_would_not_fit_in_memory(monkeypatch):
    import neural.models.llama as llama
    from neural.models.cpu_ops import linear_cpu
    from neural.models.llama import Linear

    asked = []
    monkeypatch.setattr(llama, "memory_allows_copy", lambda nbytes: asked.append(nbytes) or False)
    model = _tiny_model()
    with pytest.warns(UserWarning, match="does not fit in the available memory"):
        model.bind_kv_cache(torch.zeros(2, 2, 4, 16, 2, 8), prepack_weights=True)
    assert all(m.op is linear_cpu for m in model.modules() if isinstance(m, Linear))
    # 2 layers x (qkv 64x32 + o 32x32 + gate_up 96x32 + down 32x48) + LM head 64x32, fp32
    assert asked == [4 * (2 * (64 * 32 + 32 * 32 + 96 * 32 + 32 * 48) + 64 * 32)]


def test_available_memory_decides_the_copy(monkeypatch, tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       8000000 kB\nMemAvailable:    1000000 kB\n")
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: real_open(meminfo if path == "/proc/meminfo" else path, *a, **k))
    assert onednn_linear.memory_allows_copy(500_000 * 1024)
    assert not onednn_linear.memory_allows_copy(500_001 * 1024)
