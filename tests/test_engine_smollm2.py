"""The real default model (SmolLM2-135M-Instruct Q4_1 GGUF) against transformers' own GGUF loading."""
from __future__ import annotations

import pytest
import torch

from neural import Engine, EngineConfig, SamplingParams
from neural.default_model import default_model_path

pytestmark = pytest.mark.slow
MAX_NEW = 20


@pytest.fixture(scope="module")
def engine():
    return Engine(EngineConfig(quantization="none"))  # the default model, float32 as transformers runs it


@pytest.fixture(scope="module")
def hf():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = default_model_path()
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, torch_dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.eval(), tok


def test_tokenizer_and_template_match_transformers(engine, hf):
    _, tok = hf
    for text in ["What is a knowledge base?", "naïve café — 你好，世界！ 🙂", "  spaces\tand\nnewlines"]:
        assert engine.tokenizer.encode(text) == tok(text).input_ids
        assert engine.tokenizer.decode(engine.tokenizer.encode(text)) == text
    msgs = [{"role": "user", "content": "Hi there"}]
    assert engine.tokenizer.apply_chat_template(msgs) == tok.apply_chat_template(
        msgs, tokenize=False, add_generation_prompt=True
    )
    assert engine.tokenizer.eos_token_ids == {tok.eos_token_id}


def test_greedy_matches_transformers(engine, hf):
    model, tok = hf
    prompts = [
        "The capital of France is",
        engine.tokenizer.apply_chat_template([{"role": "user", "content": "What is a knowledge base?"}]),
        "def fibonacci(n):",
    ]
    outs = engine.generate(prompts, SamplingParams(max_tokens=MAX_NEW, ignore_eos=True))
    for prompt, out in zip(prompts, outs):
        ids = tok(prompt, return_tensors="pt").input_ids
        assert out.prompt_token_ids == ids[0].tolist()
        with torch.no_grad():
            ref = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=MAX_NEW,
                                 do_sample=False, eos_token_id=None, pad_token_id=0)
        assert out.token_ids == ref[0, ids.shape[1]:].tolist(), prompt


def test_chat_stops_at_eos_and_decodes(engine):
    out = engine.chat([{"role": "user", "content": "Say hello."}], SamplingParams(max_tokens=64))
    assert out.finished and out.finish_reason in ("stop", "length")
    if out.finish_reason == "stop":
        assert out.token_ids[-1] in engine.tokenizer.eos_token_ids
    assert out.text == engine.tokenizer.decode(out.token_ids)
    assert engine.block_manager.num_used_blocks == 0
