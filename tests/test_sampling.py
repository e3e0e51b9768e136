"""Sampling: parameter validation, seeded reproducibility, filters against hand-computed values."""
from __future__ import annotations

import math

import pytest
import torch

from engine_tiny_models import make_tiny_model
from neural import Engine, EngineConfig, InvalidSamplingError, SamplingParams
from neural.sampler import apply_repetition_penalty, filter_logits


@pytest.mark.parametrize(
    "kw",
    [
        {"max_tokens": 0}, {"max_tokens": 2.5}, {"temperature": -1}, {"temperature": float("nan")},
        {"top_k": -1}, {"top_p": 0.0}, {"top_p": 1.5}, {"min_p": -0.1}, {"repetition_penalty": 0},
        {"seed": "abc"}, {"stop": [""]}, {"stop_token_ids": [-3]}, {"logits_processors": [42]},
    ],
)
def test_invalid_values_raise_clear_error(kw):
    name = next(iter(kw))
    with pytest.raises(InvalidSamplingError, match=name):
        SamplingParams(**kw)
    with pytest.raises(ValueError):  # also a ValueError for generic callers
        SamplingParams(**kw)


def test_stop_string_alone_is_wrapped():
    assert SamplingParams(stop="###").stop == ["###"]


def test_filters_by_hand():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    inf = float("-inf")
    assert filter_logits(logits, 2, 1.0, 0.0).tolist() == [2.0, 1.0, inf, inf]
    p = torch.softmax(logits, -1)  # [0.644, 0.237, 0.087, 0.032]
    assert filter_logits(logits, 0, 0.7, 0.0).tolist() == [2.0, 1.0, inf, inf]  # 0.644 < 0.7 -> keep 2nd
    assert filter_logits(logits, 0, 0.5, 0.0).tolist() == [2.0, inf, inf, inf]
    thr = 0.1 * float(p.max())  # 0.0644: drops the 0.032 token only
    assert filter_logits(logits, 0, 1.0, 0.1).tolist() == [2.0, 1.0, 0.0, inf]
    assert thr > float(p[3])


def test_repetition_penalty_by_hand():
    out = apply_repetition_penalty(torch.tensor([2.0, -2.0, 1.0]), [0, 1, 1], 2.0)
    assert out.tolist() == [1.0, -4.0, 1.0]


@pytest.fixture(scope="module")
def eng(tmp_path_factory):
    folder = make_tiny_model(tmp_path_factory.mktemp("s"), "qwen2", seed=3)
    return Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20))


def test_seeded_sampling_is_reproducible_and_batch_independent(eng):
    sp = SamplingParams(max_tokens=12, temperature=1.5, seed=123, ignore_eos=True)
    a = eng.generate([1, 5, 6], sp)[0].token_ids
    b = eng.generate([[1, 5, 6], [1, 9], [1, 40, 41, 42]], [sp, SamplingParams(temperature=1.0, max_tokens=5), sp])
    assert b[0].token_ids == a
    c = eng.generate([1, 5, 6], SamplingParams(max_tokens=12, temperature=1.5, seed=124, ignore_eos=True))[0]
    assert c.token_ids != a  # 96-way vocab at T=1.5: 12 identical draws is vanishingly unlikely


def test_top_k_1_equals_greedy_and_logprobs(eng):
    greedy = eng.generate([1, 7, 8], SamplingParams(max_tokens=8, ignore_eos=True, logprobs=True))[0]
    topk1 = eng.generate([1, 7, 8], SamplingParams(max_tokens=8, ignore_eos=True, temperature=0.8, top_k=1, seed=1))[0]
    assert topk1.token_ids == greedy.token_ids
    assert len(greedy.logprobs) == 8 and all(lp <= 0 and math.isfinite(lp) for lp in greedy.logprobs)


def test_logits_processor_constrains_output(eng):
    allowed = [10, 11]

    def only_allowed(ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        mask = torch.full_like(logits, float("-inf"))
        mask[allowed] = 0
        return logits + mask

    out = eng.generate([1, 5], SamplingParams(max_tokens=6, logits_processors=[only_allowed], ignore_eos=True))[0]
    assert set(out.token_ids) <= set(allowed)


def test_logprob_of_greedy_token_matches_log_softmax(eng):
    seen = []
    rec = lambda ids, lg: (seen.append(lg.clone()), lg)[1]  # noqa: E731
    out = eng.generate([1, 5, 6], SamplingParams(max_tokens=3, logprobs=True, logits_processors=[rec], ignore_eos=True))[0]
    for lg, tok, lp in zip(seen, out.token_ids, out.logprobs):
        assert lp == pytest.approx(float(torch.log_softmax(lg, -1)[tok]), abs=1e-5)
