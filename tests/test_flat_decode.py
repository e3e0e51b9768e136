"""neural/models/flat_decode.py: the CPU decode step without module calls gives the module path's hidden states
bit for bit, for every kind of projection the engine builds (fp32, prepacked fp32, int8 in both modes, GGUF-packed),
one and several sequences, and is what a CPU decode step runs."""
from __future__ import annotations

import pytest
import torch

from gguf import GGMLQuantizationType as QT

from engine_tiny_models import make_tiny_model
from neural.loader import load_model
from neural.model_runner import ModelRunner
from neural.models.flat_decode import FlatDecode
from neural.models.llama import DecoderLayer
from neural.quant_int8 import Int8Setup, linear_shapes, make_plan
from neural.sampling_params import SamplingParams
from neural.quant import QuantizedLinear
from neural.sequence import Sequence
from test_engine_quantized import write_tiny_gguf

CPU = torch.device("cpu")


def runner_for(folder, weights: str) -> ModelRunner:
    if weights == "gguf":  # projections kept packed (Q4_0 / Q8_0), dequantized per call
        path = write_tiny_gguf(folder.parent / "tiny.gguf", "qwen2", {"attn_output": QT.Q4_0, "ffn_down": QT.Q8_0})
        loaded = load_model(path, "gguf")
        runner = ModelRunner(loaded.config, loaded.weights, torch.float32, CPU, 4, 32, 96, packed=loaded.packed)
        assert isinstance(runner.model.layers[0].mlp.down_proj, QuantizedLinear)
        return runner
    loaded = load_model(folder)
    if weights in ("int8", "int8-fast"):
        cfg = loaded.config
        plan = make_plan(cfg, {s: (True, "test") for s in linear_shapes(cfg).values()}, residual=weights == "int8")
        return ModelRunner(cfg, loaded.weights, torch.float32, CPU, 4, 32, 96, int8=Int8Setup(plan, list(range(3, 60))))
    return ModelRunner(loaded.config, loaded.weights, torch.float32, CPU, 4, 32, 96,
                       prepack_weights=weights == "prepacked")


def prefilled(runner: ModelRunner, prompts: list[list[int]]) -> list[Sequence]:
    """Sequences whose prompts are in the KV cache, each with one new token to decode (blocks 0-7, 8-15, ...; 4 tokens a block)."""
    return [prefilled_one(runner, prompt, list(range(8 * i, 8 * i + 8)), 11 + i) for i, prompt in enumerate(prompts)]


def prefilled_one(runner: ModelRunner, prompt: list[int], blocks: list[int], next_token: int) -> Sequence:
    """A sequence whose ``prompt`` is in the KV cache (in ``blocks``), with ``next_token`` to decode."""
    seq = Sequence(f"s{blocks[0]}", None, list(prompt), SamplingParams())
    seq.block_table = blocks
    runner.run([seq], [len(prompt)])
    seq.num_computed_tokens = len(prompt)
    seq.token_ids.append(next_token)
    return seq


@pytest.mark.parametrize("arch,weights", [
    ("llama", "fp32"), ("qwen2", "prepacked"), ("llama", "int8"), ("qwen2", "int8"), ("qwen2", "int8-fast"),
    ("qwen2", "gguf"),
])
def test_flat_decode_gives_the_module_paths_hidden_states_bit_for_bit(tmp_path, arch, weights) -> None:
    runner = runner_for(make_tiny_model(tmp_path / arch, arch), weights)
    model = runner.model
    assert isinstance(model.flat_decode, FlatDecode)
    seqs = prefilled(runner, [[5, 17, 3, 40, 22], list(range(3, 33)), [9]])  # the second fills 8 blocks of 4
    flat = model.flat_decode
    for batch in (seqs[:1], seqs):
        ids, positions, meta = runner.prepare(batch, [1] * len(batch))
        with torch.inference_mode():
            got = model(ids, positions, meta)
            # the same step again through the modules: the KV store writes the same rows, so the cache is as before
            model.flat_decode = None
            want = model(ids, positions, meta)
            model.flat_decode = flat
        assert got.shape == (len(batch), model.config.hidden_size)
        assert torch.equal(got, want)


def test_a_cpu_decode_step_runs_no_module_and_prefill_still_does(tmp_path, monkeypatch) -> None:
    runner = runner_for(make_tiny_model(tmp_path / "m", "llama"), "fp32")
    seqs = prefilled(runner, [[5, 17, 3]])
    calls = []
    original = DecoderLayer.forward

    def spy(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(DecoderLayer, "forward", spy)
    logits = runner.run(seqs, [1])
    assert calls == [] and logits.shape == (1, runner.config.vocab_size)
    fresh = Sequence("p", None, [7, 8, 9], SamplingParams())
    fresh.block_table = list(range(24, 32))
    runner.run([fresh], [3])
    assert len(calls) == runner.config.num_hidden_layers  # prefill went through the layers, once each


def test_forced_kernels_keep_the_module_path(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VERIRAG_KERNELS", "reference")
    runner = runner_for(make_tiny_model(tmp_path / "m", "llama"), "fp32")
    assert runner.model.flat_decode is None
    runner.run(prefilled(runner, [[5, 17, 3]]), [1])  # decodes through the modules and the kernels' references


def test_a_rebound_kv_cache_rebinds_the_flat_step(tmp_path) -> None:
    runner = runner_for(make_tiny_model(tmp_path / "m", "llama"), "fp32")
    before = runner.model.flat_decode
    runner.allocate_kv_cache(24)
    after = runner.model.flat_decode
    assert after is not before and after is not None
    assert after.layers[0].k_cache.data_ptr() == runner.kv_cache[0, 0].data_ptr()
    assert after.layers[1].v_slots.data_ptr() == runner.kv_cache[1, 1].data_ptr()


@pytest.mark.parametrize("arch,weights", [("llama", "int8"), ("qwen2", "int8"), ("qwen2", "int8-fast")])
def test_a_verify_step_scores_what_plain_decode_steps_score_bit_for_bit(tmp_path, arch, weights) -> None:
    """A speculative verify step (k + 1 query rows of a sequence) gives the logits that k + 1 one-row decode
    steps give, alone or beside another sequence's rows, so greedy speculation emits exactly plain decoding's
    tokens (int8 sums exactly; see ModelRunner.run)."""
    folder = make_tiny_model(tmp_path / arch, arch)
    prompts, drafts = [[5, 17, 3, 40, 22, 9, 31], list(range(3, 24))], [[12, 7, 44, 3, 19], [8, 8, 30]]
    plain = runner_for(folder, weights)
    want = []
    for prompt, draft in zip(prompts, drafts):  # each sequence alone, one token a step
        seq = prefilled_one(plain, prompt, list(range(8)), 11)
        rows = []
        for token in draft + [None]:
            rows.append(plain.run([seq], [1])[0])
            seq.num_computed_tokens += 1
            seq.token_ids.append(token)
        want.append(torch.stack(rows))
    verifier = runner_for(folder, weights)
    for batch in ([0], [0, 1]):
        seqs = [prefilled_one(verifier, prompts[i], list(range(8 * i, 8 * i + 8)), 11) for i in batch]
        for seq, i in zip(seqs, batch):
            seq.token_ids.extend(drafts[i])
        counts = [1 + len(drafts[i]) for i in batch]
        got = verifier.run(seqs, counts, list(range(sum(counts))))
        assert torch.equal(got, torch.cat([want[i] for i in batch]))
