"""Draft-model proposer (self-speculation with the target's first layers, own paged KV): its proposals are
the truncated model's greedy continuations (checked against transformers), output identical, no leak."""
from __future__ import annotations

import pytest
import torch

from engine_tiny_models import hf_greedy, make_tiny_model
from neural import Engine, EngineConfig, SamplingParams
from neural.errors import EngineError
from neural.spec_decode import SpeculativeConfig
from test_spec_decode_engine import _prompts


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("deep"), "llama", num_hidden_layers=4)


def _engine(folder, spec=None, **kw) -> Engine:
    kw.setdefault("kv_cache_bytes", 1 << 20)
    return Engine(EngineConfig(model=str(folder), block_size=4, speculative=spec, **kw))


def test_self_speculation_proposals_are_truncated_model_greedy(folder):
    from transformers import AutoModelForCausalLM

    spec = _engine(folder, SpeculativeConfig(method="draft", draft_num_layers=2, num_speculative_tokens=3,
                                             draft_kv_cache_bytes=1 << 18))
    proposer = spec.speculator.proposer
    calls: list[tuple[list[int], int, list[int]]] = []
    inner = proposer.propose

    def recording(seqs, ks):
        out = inner(seqs, ks)
        calls.extend((list(s.token_ids), k, o) for s, k, o in zip(seqs, ks, out))
        return out

    proposer.propose = recording
    prompts = _prompts(5, seed=7)
    plain = _engine(folder).generate(prompts, SamplingParams(max_tokens=20, ignore_eos=True))
    outs = spec.generate(prompts, SamplingParams(max_tokens=20, ignore_eos=True))
    assert [o.token_ids for o in outs] == [o.token_ids for o in plain]
    # the reference: transformers running only the first 2 layers of the same checkpoint
    ref = AutoModelForCausalLM.from_pretrained(folder, num_hidden_layers=2, torch_dtype=torch.float32).eval()
    ref.generation_config.eos_token_id = None
    ref.generation_config.pad_token_id = 0
    assert len(calls) > 10
    for context, k, proposal in calls[::3]:
        assert proposal == hf_greedy(ref, context, k), context
    assert spec.metrics()["spec_proposed_tokens"] > 0
    assert spec.block_manager.num_used_blocks == 0
    assert proposer.bm.num_used_blocks == 0 and not proposer.shadows  # the draft's own pool: no leak


def test_draft_with_sampling_and_preemption_frees_everything(folder):
    block_bytes = 2 * 4 * 4 * 2 * 16 * 4
    spec = _engine(folder, SpeculativeConfig(method="draft", num_speculative_tokens=4),
                   kv_cache_bytes=20 * block_bytes)
    prompts = _prompts(5, seed=8)
    sps = [SamplingParams(max_tokens=30, ignore_eos=True, temperature=0.8, seed=i) for i in range(5)]
    outs = spec.generate(prompts, sps)
    assert all(len(o.token_ids) == 30 for o in outs)
    assert spec.metrics()["num_preemptions"] > 0
    assert spec.block_manager.num_used_blocks == 0 and spec.speculator.proposer.bm.num_used_blocks == 0


def test_bad_draft_configs(folder, tmp_path):
    with pytest.raises(EngineError, match="draft_num_layers"):
        _engine(folder, SpeculativeConfig(method="draft", draft_num_layers=4))
    with pytest.raises(EngineError, match="draft_num_layers"):
        SpeculativeConfig(method="draft", draft_num_layers=0)
    other = make_tiny_model(tmp_path / "v", "llama", vocab_size=128)
    with pytest.raises(EngineError, match="vocab_size"):
        _engine(folder, SpeculativeConfig(method="draft", draft_model=str(other)))


def test_the_draft_runner_is_built_as_the_engines_is_with_a_kv_pool_for_its_own_layers(folder):
    from neural.model_runner import ModelRunner, kv_bytes_per_block

    spec = _engine(folder, SpeculativeConfig(method="draft", draft_num_layers=2, num_speculative_tokens=3,
                                             draft_kv_cache_bytes=1 << 18))
    draft, target = spec.speculator.proposer.runner, spec.runner
    assert type(draft) is ModelRunner and type(target) is ModelRunner
    mc = spec.model_config
    assert draft.num_blocks == (1 << 18) // kv_bytes_per_block(mc, 4, torch.float32, 2)
    assert tuple(draft.kv_cache.shape) == (2, 2, draft.num_blocks, 4, mc.num_key_value_heads, mc.head_dim)
    assert tuple(target.kv_cache.shape)[:3] == (2, 4, target.num_blocks)
    assert target.num_blocks == (1 << 20) // kv_bytes_per_block(mc, 4, torch.float32)
    # the draft's layers are the target's (same weights), its KV pool its own
    assert draft.model.layers[0].self_attn.qkv_proj.weight is target.model.layers[0].self_attn.qkv_proj.weight
    assert draft.kv_cache.data_ptr() != target.kv_cache.data_ptr()
