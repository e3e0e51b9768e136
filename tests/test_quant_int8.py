"""quantization="int8": fbgemm int8 projections against fp32 (the kernel, SmoothQuant's folding, the plan, the
cached state, the engine's choice of default), on tiny random models; the real models in the slow tests."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from engine_tiny_models import make_tiny_model
from neural import Engine, EngineConfig, EngineError, SamplingParams
from neural.int8_setup import resolve_quantization
from neural.loader import load_model
from neural.model_runner import ModelRunner
from neural.models import int8_speed
from neural.models.int8_linear import Int8Embedding, Int8Linear, quantize_groups, quantize_rows
from neural.models.llama import Linear
from neural.models.onednn_linear import PrepackedLinear
from neural.sequence import Sequence
from neural.quant_int8 import Int8Setup, calibrate, linear_shapes, make_plan, smooth
from test_engine_quantized import greedy

CPU = torch.device("cpu")


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def test_quantize_rows_rounds_to_the_nearest_step() -> None:
    w = torch.randn(40, 24) * torch.logspace(-3, 1, 40)[:, None]  # rows of very different ranges
    q, scale = quantize_rows(w)
    assert q.dtype == torch.int8 and int(q.abs().max()) == 127
    assert torch.all((w - q.float() * scale[:, None]).abs() <= scale[:, None] / 2 + 1e-7)


@pytest.mark.parametrize("residual", [True, False])
def test_int8_linear_matches_fp32_and_keeps_each_row_at_its_own_resolution(residual) -> None:
    torch.manual_seed(0)
    w, b = torch.randn(48, 64) * 0.05, torch.randn(48)
    lin = Int8Linear.from_float(w, b, residual=residual)
    x = torch.randn(5, 64)
    assert rel_err(lin(x), F.linear(x, w, b)) < 0.02
    assert lin(x.view(5, 1, 64)).shape == (5, 1, 48)
    # one row 1000x larger (an attention-sink token): fbgemm's single activation scale per call would leave
    # the other rows a few levels; scaled per row first, they keep their 1-2 % error
    loud = torch.cat([x, 1000 * torch.randn(1, 64)])
    for i in range(5):
        assert rel_err(lin(loud)[i] - b, (x[i] @ w.t())) < 0.03
    with pytest.raises(ValueError, match="features"):
        lin(torch.randn(2, 63))


@pytest.mark.parametrize("rows", [1, 7])
def test_two_pass_activations_are_within_the_residual_step_of_the_exact_product(rows) -> None:
    from neural.models.int8_linear import ACT_LEVELS, RESIDUAL_GAIN

    torch.manual_seed(3)
    w = torch.randn(96, 80) * 0.05
    x = torch.randn(rows, 80) * torch.logspace(-2, 2, rows)[:, None]  # rows of very different ranges
    x[0, 11] = 40 * x[0].abs().max()  # and an outlier channel
    two, one = Int8Linear.from_float(w), Int8Linear.from_float(w, residual=False)
    q, scale = quantize_rows(w)
    w8 = q.double() * scale.double()[:, None]  # the int8 weights; the reference keeps activations exact
    exact = x.double() @ w8.t()
    # each activation is off by at most half a step of the second pass: its row's absmax / 64 / 127 / 2
    half_step = x.abs().amax(dim=1, keepdim=True).double() / ACT_LEVELS / RESIDUAL_GAIN / 2
    bound = half_step * w8.abs().sum(dim=1)[None, :]
    err_two = (two(x).double() - exact).abs()
    assert torch.all(err_two <= bound * 1.01 + 1e-5 * exact.abs().amax(dim=1, keepdim=True))
    # one 7-bit pass is far coarser: the second pass is what buys the precision
    assert float((one(x).double() - exact).norm()) > 20 * float(err_two.norm())


def test_one_decode_row_takes_the_direct_kernel_call_with_the_same_result() -> None:
    from neural.models.int8_linear import linear_one_pass, linear_residual

    torch.manual_seed(8)
    w, b = torch.randn(40, 24) * 0.1, torch.randn(40)
    for bias in (None, b):
        x = torch.randn(1, 24)
        for residual, kernel in ((False, linear_one_pass), (True, linear_residual)):
            lin = Int8Linear.from_float(w, bias, residual=residual)
            direct = kernel(x, lin.packed)
            assert torch.equal(lin(x), direct if bias is None else direct + bias)
            # the general path (N-D input, a non-contiguous row) gives the one-row path's values
            assert torch.equal(lin(x.view(1, 1, 24))[0], lin(x))
            wide = torch.randn(1, 48)[:, ::2]
            assert not wide.is_contiguous() and torch.equal(lin(wide), lin(wide.contiguous()))
    for residual in (True, False):  # no 0/0
        assert torch.equal(Int8Linear.from_float(w, residual=residual)(torch.zeros(1, 24)), torch.zeros(1, 40))


def test_one_pass_uses_all_8_activation_bits_against_7_bit_weights_without_overflow() -> None:
    from neural.models.int8_linear import FAST_LEVELS, FAST_QMAX

    torch.manual_seed(5)
    w = torch.randn(64, 256) * 0.05
    w[:, :8] *= 30  # columns at the weights' full range, where int16 pair sums would overflow first
    x = torch.rand(3, 256) + 0.5  # all positive, near their maximum: the largest u8 codes in every pair
    x[1] *= -1
    one = Int8Linear.from_float(w, residual=False)
    q, scale = quantize_rows(w, FAST_QMAX)
    assert int(q.abs().max()) == FAST_QMAX
    w7 = q.double() * scale.double()[:, None]
    exact = x.double() @ w7.t()
    # each activation off by at most half of its row's step (absmax / 127 / 2). On an AVX2-only CPU fbgemm sums
    # u8*s8 pairs in int16, where 8-bit weights against these codes overflow (AVX512-VNNI sums in int32)
    bound = (x.abs().amax(dim=1, keepdim=True).double() / FAST_LEVELS / 2) * w7.abs().sum(dim=1)[None, :]
    for rows in (x, x[:1]):
        err = (one(rows).double() - exact[: len(rows)]).abs()
        assert torch.all(err <= bound[: len(rows)] * 1.01 + 1e-5 * exact.abs().amax())


def test_a_wide_weight_packed_in_pieces_computes_the_same(monkeypatch) -> None:
    from neural.models import int8_linear

    w, b = torch.randn(50, 32), torch.randn(50)
    for residual in (True, False):
        for x in (torch.randn(3, 32), torch.randn(1, 32)):
            whole = Int8Linear.from_float(w, b, residual=residual)
            monkeypatch.setattr(int8_linear, "PACK_ROWS", 16)  # pieces of 16, 16, 16, 2 rows
            pieces = Int8Linear.from_float(w, b, residual=residual)
            monkeypatch.undo()
            assert len(pieces.packed) == 4 and len(whole.packed) == 1
            assert torch.equal(pieces(x), whole(x))


def test_int8_embedding_dequantizes_the_rows_it_reads() -> None:
    w = torch.randn(30, 64)
    w[:, 5] *= 50  # an outlier column: one scale per row would spend its range on it
    q, scale = quantize_groups(w, 32)
    assert scale.shape == (30, 2) and q.dtype == torch.int8
    emb = Int8Embedding(q, scale)
    ids = torch.tensor([[3, 0], [29, 3]])
    assert torch.equal(emb(ids), (q.float().view(30, 2, 32) * scale[:, :, None]).view(30, 64)[ids])
    assert rel_err(emb(ids)[..., 32:], w[ids][..., 32:]) < 0.01  # the group without the outlier keeps its precision
    row_q, row_scale = quantize_rows(w)
    assert rel_err(Int8Embedding(q, scale)(ids), w[ids]) < rel_err(Int8Embedding(row_q, row_scale)(ids), w[ids])


def all_logits(runner: ModelRunner, ids: list[int]) -> torch.Tensor:
    seq = Sequence("t", None, list(ids), SamplingParams())
    seq.block_table = list(range(8))
    return runner.run([seq], [len(ids)], list(range(len(ids))))


def fp32_runner(folder) -> ModelRunner:
    loaded = load_model(folder)
    return ModelRunner(loaded.config, loaded.weights, torch.float32, CPU, 4, 32, 96)


def all_int8(cfg) -> dict:
    return {shape: (True, "test") for shape in linear_shapes(cfg).values()}


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_smoothing_leaves_the_fp32_model_unchanged(tmp_path, arch) -> None:
    folder = make_tiny_model(tmp_path / arch, arch)
    runner = fp32_runner(folder)
    prompt = [5, 17, 3, 40, 22, 9, 61, 7]
    _, before = greedy(runner, prompt, 3)
    plan = make_plan(runner.config, all_int8(runner.config), residual=False)  # one 7-bit pass: smoothed
    assert plan.alpha == 0.5 and make_plan(runner.config, all_int8(runner.config)).alpha is None
    amax = calibrate(runner.model, list(range(3, 60)), 4)
    assert set(amax) == {n for n, m in runner.model.named_modules() if isinstance(m, Linear)}
    assert all(a.shape == (m.in_features,) for n, m in runner.model.named_modules() if isinstance(m, Linear)
               for a in [amax[n]])
    smooth(runner.model, amax, plan)
    runner.model.bind_kv_cache(runner.kv_cache)  # calibrate bound a scratch cache
    if runner.config.tie_word_embeddings:
        assert runner.model.lm_head.weight is not runner.model.embed_tokens.weight  # the head got its own copy
    _, after = greedy(runner, prompt, 3)
    for a, b in zip(after, before):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("arch,residual", [("llama", True), ("qwen2", True), ("qwen2", False)])
def test_int8_runner_is_close_to_fp32_and_its_cached_state_rebuilds_it_exactly(tmp_path, arch, residual) -> None:
    folder = make_tiny_model(tmp_path / arch, arch)
    ref = fp32_runner(folder)
    cfg = ref.config
    # the 'slow' shape keeps fp32 (as a machine where int8 loses there would): a per-layer fallback
    slow = linear_shapes(cfg)["layers.0.self_attn.o_proj"]
    verdicts = {**all_int8(cfg), slow: (False, "int8 slower here")}
    plan = make_plan(cfg, verdicts, residual)
    assert all(n.endswith("o_proj") for n in plan.kept) and plan.kept
    setup = Int8Setup(plan, list(range(3, 60)))
    loaded = load_model(folder)
    cold = ModelRunner(cfg, loaded.weights, torch.float32, CPU, 4, 32, 96, prepack_weights=True, int8=setup)
    model = cold.model
    assert setup.built and isinstance(model.lm_head, Int8Linear) and isinstance(model.embed_tokens, Int8Embedding)
    assert isinstance(model.layers[0].mlp.down_proj, Int8Linear)
    assert all(m.residual == residual for m in model.modules() if isinstance(m, Int8Linear))
    kept = model.layers[0].self_attn.o_proj
    assert isinstance(kept, Linear)
    assert isinstance(kept.op, PrepackedLinear) or not int8_speed.onednn_available()  # fp32 layers keep their path
    text = [5, 17, 3, 40, 22, 9, 61, 7, 30, 31, 12, 80]
    # teacher-forced (a random model's near-ties would let free-running greedy paths part at once)
    # int8 weights (and 8-bit activations against 7-bit weights, one pass) through two layers: a few % off; a broken kernel ~100 %
    assert rel_err(all_logits(cold, text), all_logits(ref, text)) < (0.03 if residual else 0.1)
    prompt = text[:8]
    tokens, logits = greedy(cold, prompt, 4)

    warm_setup = Int8Setup(plan, [], state=setup.state)
    never_read = iter(())  # the warm path takes everything from the cached state
    warm = ModelRunner(cfg, never_read, torch.float32, CPU, 4, 32, 96, prepack_weights=True, int8=warm_setup)
    assert not warm_setup.built
    assert all(m.residual == residual for m in warm.model.modules() if isinstance(m, Int8Linear))
    warm_tokens, warm_logits = greedy(warm, prompt, 4)
    assert warm_tokens == tokens
    for a, b in zip(warm_logits, logits):
        torch.testing.assert_close(a, b, atol=0, rtol=0)


def test_engine_int8_on_an_hf_folder_and_its_config_errors(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VERIRAG_CACHE_DIR", str(tmp_path / "cache"))  # the speed record of these tiny shapes
    folder = make_tiny_model(tmp_path / "m", "qwen2")
    engine = Engine(EngineConfig(model=str(folder), quantization="int8", num_threads=1))
    assert engine.quantization == "int8"
    plan = engine.int8_plan  # measured here: at these tiny shapes fp32 may well win, and then stays
    for name, module in engine.runner.model.named_modules():
        if name in plan.int8:
            assert isinstance(module, Int8Linear), name
        elif name in plan.kept:
            assert isinstance(module, Linear) and "int8 takes" in plan.kept[name], name
    assert len(plan.int8) + len(plan.kept) == 2 * 4 + 1
    out = engine.generate("w5 w6 w7", SamplingParams(max_tokens=4, ignore_eos=True))[0]
    assert len(out.token_ids) == 4
    with pytest.raises(EngineError, match="quantization='int8' runs on CPU in float32"):
        Engine(EngineConfig(model=str(folder), quantization="int8", dtype="bfloat16"))
    with pytest.raises(EngineError, match="quantization must be None or one of"):
        EngineConfig(quantization="int4")


def test_auto_is_int8_only_for_the_registry_entries_that_say_so() -> None:
    from neural.model_registry import REGISTRY

    bf16 = torch.bfloat16
    for name, entry in REGISTRY.items():
        want = entry.cpu_quantization
        assert resolve_quantization("auto", name, "unused", CPU, torch.float32) == want
        assert resolve_quantization("auto", name, "unused", CPU, bf16) is None  # int8 is an fp32 CPU path
        assert resolve_quantization("auto", name, "unused", torch.device("cuda"), torch.float32) is None
    assert REGISTRY["qwen2.5-coder-0.5b"].cpu_quantization == "int8"
    assert REGISTRY["smollm2-135m"].cpu_quantization == "int8"  # two passes: within 1 % of fp32
    assert resolve_quantization("auto", "/some/model.gguf", "/some/model.gguf", CPU, torch.float32) is None
    assert resolve_quantization(None, "qwen2.5-coder-0.5b", "x", CPU, torch.float32) is None
    assert resolve_quantization("none", "qwen2.5-coder-0.5b", "x", CPU, torch.float32) is None


def test_speed_verdicts_are_measured_once_per_machine(tmp_path, monkeypatch) -> None:
    calls = []

    def fake_time(out_f, in_f, prepack, residual):
        calls.append((out_f, in_f))
        int8_1 = 2e-4 if out_f == 100 else 5e-5  # the 100-row shape: int8 slower at one row and at 16
        return {"fp32@1": 1e-4, "int8@1": int8_1, "fp32@16": 4e-4, "int8@16": 8 * int8_1}

    monkeypatch.setattr(int8_speed, "time_shape", fake_time)
    shapes = {(100, 64), (200, 64)}
    got = int8_speed.int8_verdicts(shapes, prepack=False, root=tmp_path)
    assert got[(200, 64)][0] is True
    assert got[(100, 64)] == (False, "int8 takes 2.00x fp32's time at 1 row, 4.00x fp32's time at 16 rows")
    assert int8_speed.int8_verdicts(shapes, prepack=False, root=tmp_path) == got
    assert sorted(calls) == sorted(shapes)  # the second call read the record
    int8_speed.int8_verdicts(shapes | {(300, 64)}, prepack=False, root=tmp_path)
    assert len(calls) == 3  # only the new shape was timed
    int8_speed.int8_verdicts(shapes, prepack=False, root=tmp_path, residual=False)
    assert len(calls) == 5  # one 7-bit pass is another kernel: timed on its own


def held_apart(engine, tokens: int = 384) -> list[int]:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    texts = [(root / p).read_text(encoding="utf-8") for p in ("kb/finance/travel_expense_2025.md", "kb/hr/leave_policy.md")]
    return engine.tokenizer.encode("\n\n".join(texts))[:tokens]


@pytest.mark.slow
@pytest.mark.parametrize("model,mode,max_ppl_rise,min_top1", [
    # two passes: +0.3 % for both models (bench/RESULTS.md); the registry default for both
    ("smollm2-135m", "int8", 0.02, 0.93),
    ("qwen2.5-coder-0.5b", "int8", 0.02, 0.95),
    # one pass, 8-bit activations against 7-bit weights: +2.9-3.3 % / +0.9 % (top-1 0.90 / 0.94), opt-in for speed
    ("smollm2-135m", "int8-fast", 0.045, 0.85),
    ("qwen2.5-coder-0.5b", "int8-fast", 0.02, 0.90),
])
def test_real_model_int8_quality_against_fp32(model, mode, max_ppl_rise, min_top1, monkeypatch) -> None:
    from neural.model_registry import REGISTRY, installed
    from neural.models import int8_speed
    from neural.quant_quality import perplexity, top1_agreement

    if not installed(REGISTRY[model]):
        pytest.skip(f"{model} is not pulled (verirag models pull {model})")
    # every projection int8: the plan a machine measures depends on its timings (a clean CI machine kept the
    # 135M's o_proj in fp32 and read +7.3 % where all-int8 reads +3.7 %), so the bar is held on a fixed plan
    monkeypatch.setattr(int8_speed, "int8_verdicts",
                        lambda shapes, prepack, root=None, residual=True: {s: (True, "int8 for this test") for s in shapes})
    fp32 = Engine(EngineConfig(model=model, quantization="none"))
    int8 = Engine(EngineConfig(model=model, quantization=mode))
    ids = held_apart(fp32)
    ppl32, ppl8 = perplexity(fp32, ids), perplexity(int8, ids)
    assert ppl8 <= ppl32 * (1 + max_ppl_rise), (ppl32, ppl8)
    assert top1_agreement(int8, fp32, ids) >= min_top1


def test_ask_and_eval_pass_quantization_to_the_engine(monkeypatch) -> None:
    import neural
    import pipeline.loop.factory as factory
    from api.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["ask", "q", "--quantization", "none"]).quantization == "none"
    assert parser.parse_args(["eval", "d.jsonl", "--quantization", "int8"]).quantization == "int8"
    assert parser.parse_args(["ask", "q"]).quantization == "auto"
    seen = []
    monkeypatch.setattr(factory, "open_rules", lambda path: object())
    monkeypatch.setattr(factory, "open_retriever", lambda kb, index: object())
    monkeypatch.setattr(neural, "Engine", lambda config: seen.append(config) or object())
    monkeypatch.setattr(factory, "Answerer", lambda *a, **k: "answerer", raising=False)
    factory.default_answerer("kb", "rules", "m", quantization="none")
    assert seen[0].quantization == "none"


def test_a_shape_is_timed_over_weight_copies_that_overflow_the_cache(monkeypatch) -> None:
    # a weight timed again and again sits in the cache, where small fp32 weights look faster than in a decode
    # step (SmolLM2-135M's o_proj): the calls go round COLD_BYTES of copies, MAX_COPIES at most
    built = []
    real = Int8Linear.from_float.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Int8Linear, "from_float", classmethod(lambda cls, w, *a, **k: built.append(w) or real(cls, w, *a, **k)))
    monkeypatch.setattr(int8_speed, "REPEAT", 2)
    monkeypatch.setattr(int8_speed, "COLD_BYTES", 5 * 64 * 32 * 4)
    times = int8_speed.time_shape(64, 32, prepack=False)
    assert len(built) == 5 and len({id(w) for w in built}) == 5 and not torch.equal(built[0], built[1])
    assert set(times) == {"fp32@1", "int8@1", "fp32@16", "int8@16"} and all(t > 0 for t in times.values())
    monkeypatch.setattr(int8_speed, "COLD_BYTES", 10**12)
    built.clear()
    int8_speed.time_shape(64, 32, prepack=False)
    assert len(built) == int8_speed.MAX_COPIES
