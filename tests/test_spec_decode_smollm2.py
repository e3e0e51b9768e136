"""Speculative decoding on the real default model: greedy output identical to plain decoding."""
from __future__ import annotations

import pytest

from neural import Engine, EngineConfig, SamplingParams
from neural.spec_decode import SpeculativeConfig

pytestmark = pytest.mark.slow


def test_prompt_lookup_greedy_identical_on_smollm2():
    plain = Engine(EngineConfig())
    spec = Engine(EngineConfig(speculative=SpeculativeConfig(num_speculative_tokens=6)))
    tok = plain.tokenizer
    context = ("Employees may work remotely once they have completed their probation period of 6 months. "
               "Up to 5 unused days of annual leave may be carried over into the next year.")
    prompts = [
        tok.apply_chat_template([{"role": "user", "content": f"{context}\n\nRepeat the first sentence word for word."}]),
        tok.apply_chat_template([{"role": "user", "content": "年假可以结转多少天？请用中文回答。"}]),
    ]
    sp = SamplingParams(max_tokens=24, ignore_eos=True)
    want = plain.generate(prompts, sp)
    got = [spec.generate(p, sp)[0] for p in prompts]
    assert [o.token_ids for o in got] == [o.token_ids for o in want]
    assert [o.text for o in got] == [o.text for o in want]
    assert spec.metrics()["spec_accepted_tokens"] > 0  # the quoting prompt must have been sped up
    assert spec.block_manager.num_used_blocks == 0
