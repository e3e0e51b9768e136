"""Engine vs HF transformers on tiny random Llama/Qwen2 checkpoints: greedy tokens equal, logits close."""
from __future__ import annotations

import pytest
import torch

from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model
from neural import Engine, EngineConfig, SamplingParams

PROMPTS = [
    [1, 5, 9, 14, 33, 70],
    [1, 40, 41, 42],
    [1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 60],
    [1, 88],
]
NEW = 12


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def tiny(request, tmp_path_factory):
    folder = make_tiny_model(tmp_path_factory.mktemp(request.param), request.param)
    return request.param, folder, load_hf_reference(folder)


def _engine(folder, **kw) -> Engine:
    kw.setdefault("block_size", 4)  # small blocks: prompts span several blocks, tables have many entries
    kw.setdefault("kv_cache_bytes", 1 << 20)
    return Engine(EngineConfig(model=str(folder), **kw))


def _greedy(n: int = NEW) -> SamplingParams:
    return SamplingParams(max_tokens=n, ignore_eos=True)


def test_single_request_greedy_matches_hf(tiny):
    _, folder, hf = tiny
    engine = _engine(folder)
    for prompt in PROMPTS:
        out = engine.generate(prompt, _greedy())[0]
        assert out.token_ids == hf_greedy(hf, prompt, NEW)
        assert out.finish_reason == "length" and out.finished


def test_batched_staggered_joins_match_hf(tiny):
    _, folder, hf = tiny
    # a small per-step token budget forces chunked prefill of the long prompt alongside decodes
    engine = _engine(folder, max_num_batched_tokens=8)
    expected = {i: hf_greedy(hf, p, NEW) for i, p in enumerate(PROMPTS)}
    got: dict[str, list[int]] = {}
    join_at = {0: 0, 1: 0, 2: 3, 3: 5}  # step at which each request arrives
    step = 0
    while len(got) < len(PROMPTS):
        for i, s in join_at.items():
            if s == step:
                engine.add_request(PROMPTS[i], _greedy(), request_id=str(i))
        for out in engine.step():
            if out.finished:
                got[out.request_id] = out.token_ids
        step += 1
    assert {int(k): v for k, v in got.items()} == expected
    assert engine.block_manager.num_used_blocks == 0


def test_logits_match_hf_forward(tiny):
    _, folder, hf = tiny
    engine = _engine(folder)
    seen: list[torch.Tensor] = []

    def record(ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        seen.append(logits.clone())
        return logits

    prompt = PROMPTS[2]
    out = engine.generate(prompt, SamplingParams(max_tokens=6, ignore_eos=True, logits_processors=[record]))[0]
    full = torch.tensor([prompt + out.token_ids[:-1]])
    with torch.no_grad():
        ref = hf(full).logits[0, len(prompt) - 1 :].float()
    assert len(seen) == 6
    torch.testing.assert_close(torch.stack(seen), ref, atol=1e-4, rtol=1e-4)


def test_bfloat16_runs_and_mostly_agrees(tiny):
    _, folder, hf = tiny
    engine = _engine(folder, dtype="bfloat16")
    out = engine.generate(PROMPTS[0], _greedy(4))[0]
    ref = hf_greedy(hf, PROMPTS[0], 4)
    assert out.token_ids[0] == ref[0]  # first token from an identical prefill, only rounding differs


def test_llama3_rope_scaling_matches_hf(tmp_path):
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 16}  # tiny original length so the scaling matters here
    folder = make_tiny_model(tmp_path / "l3", "llama", seed=7, rope_scaling=scaling)
    hf = load_hf_reference(folder)
    engine = _engine(folder)
    prompt = PROMPTS[2]  # 28 tokens: past the 16-token original context
    assert engine.model_config.rope_scaling["rope_type"] == "llama3"
    assert engine.generate(prompt, _greedy())[0].token_ids == hf_greedy(hf, prompt, NEW)
