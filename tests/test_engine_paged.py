"""Paged-cache behaviour of the whole engine: no block leaks, prefix hit == miss, preemption is exact."""
from __future__ import annotations

import pytest

from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model
from neural import Engine, EngineConfig, SamplingParams
from neural.model_runner import kv_bytes_per_block

SHARED = [1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25]  # 17 tokens: 4 full blocks of 4


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("llama"), "llama", seed=1)


@pytest.fixture(scope="module")
def hf(folder):
    return load_hf_reference(folder)


def engine(folder, num_blocks: int = 64, **kw) -> Engine:
    probe = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20))
    per_block = kv_bytes_per_block(probe.model_config, 4, probe.runner.dtype)
    return Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=num_blocks * per_block, **kw))


def greedy(n: int = 10) -> SamplingParams:
    return SamplingParams(max_tokens=n, ignore_eos=True)


def test_prefix_cache_hit_equals_miss_and_hf(folder, hf):
    eng = engine(folder)
    first = eng.generate(SHARED + [40, 41], greedy())[0]
    assert first.metrics.cached_tokens == 0
    second = eng.generate(SHARED + [40, 41], greedy())[0]  # same prompt: 4 blocks served from cache
    assert second.metrics.cached_tokens == 16
    third = eng.generate(SHARED + [50], greedy())[0]  # shares the prefix only
    assert third.metrics.cached_tokens == 16
    assert second.token_ids == first.token_ids == hf_greedy(hf, SHARED + [40, 41], 10)
    assert third.token_ids == hf_greedy(hf, SHARED + [50], 10)
    assert eng.metrics()["prefix_cache_hit_rate"] > 0
    cold = engine(folder, enable_prefix_caching=False)
    assert cold.generate(SHARED + [50], greedy())[0].token_ids == third.token_ids
    assert eng.block_manager.num_used_blocks == 0


def test_requests_arriving_together_compute_their_shared_prefix_once(folder, hf):
    from neural.scheduler import IN_BATCH_PREFIX_MIN_TOKENS

    shared = [1] + [10 + i % 70 for i in range(IN_BATCH_PREFIX_MIN_TOKENS + 8)]  # 41 tokens: 10 full blocks
    prompts = [shared + [40, 41], shared + [50], [1, 60, 61, 62, 63], shared[:20] + [44]]
    eng = engine(folder)
    outs = eng.generate(prompts, greedy(8))
    # the first computes the 40-token prefix; the second waits one step and is served it from the cache;
    # the third shares nothing; the fourth shares only 16 tokens (4 blocks) -- under the threshold, no wait
    assert [o.metrics.cached_tokens for o in outs] == [0, 40, 0, 0]
    assert eng.metrics()["num_steps"] == 9  # one step more than all four starting together
    for p, out in zip(prompts, outs):
        assert out.token_ids == hf_greedy(hf, p, 8)
    assert eng.block_manager.num_used_blocks == 0
    cold = engine(folder, enable_prefix_caching=False)  # without a prefix cache nobody waits
    assert [o.token_ids for o in cold.generate(prompts, greedy(8))] == [o.token_ids for o in outs]
    assert cold.metrics()["num_steps"] == 8


def test_preemption_under_tiny_kv_budget_completes_exactly(folder, hf):
    prompts = [[1, 3 + i, 30 + i, 60 + i, 9, 9, 4] for i in range(6)]
    eng = engine(folder, num_blocks=12)  # 48 slots for 6 requests that each grow to 7 + 20 = 27 tokens
    outs = eng.generate(prompts, greedy(20))
    assert eng.scheduler.num_preemptions > 0
    for p, out in zip(prompts, outs):
        assert out.token_ids == hf_greedy(hf, p, 20)
    assert eng.block_manager.num_used_blocks == 0
    assert sum(o.metrics.num_preemptions for o in outs) == eng.scheduler.num_preemptions


def test_abort_running_and_waiting_frees_blocks(folder):
    eng = engine(folder, max_num_seqs=2)
    ids = [eng.add_request([1, 5 + i, 6, 7, 8], greedy(50)) for i in range(3)]
    for _ in range(3):
        eng.step()
    assert eng.metrics()["running"] == 2 and eng.metrics()["waiting"] == 1
    eng.abort(ids[0])  # running
    eng.abort(ids[2])  # waiting
    outs = eng.step()
    aborted = {o.request_id: o for o in outs if o.finish_reason == "abort"}
    assert set(aborted) == {ids[0], ids[2]} and all(o.finished for o in aborted.values())
    while eng.has_unfinished():
        eng.step()
    assert eng.block_manager.num_used_blocks == 0
    eng.abort("no-such-request")  # unknown ids are ignored
    assert eng.step() == []


def test_stream_deltas_concatenate_to_text_and_early_exit_frees(folder):
    eng = engine(folder)
    outs = list(eng.stream("w10 w11 w12", greedy(8)))
    assert outs[-1].finished and len(outs) == 8
    assert "".join(o.delta_text for o in outs) == outs[-1].text
    other = eng.add_request([1, 5, 6], greedy(5))
    it = eng.stream("w10 w11 w12", greedy(50))
    next(it)
    it.close()  # consumer walked away: the request is aborted, nothing leaks
    assert eng.metrics()["running"] == 1  # the other request is untouched and still runs
    outs = []
    while eng.has_unfinished():
        outs += eng.step()
    assert [o.request_id for o in outs if o.finished] == [other]
    assert eng.block_manager.num_used_blocks == 0


def test_stop_string_and_stop_token_ids(folder, hf):
    eng = engine(folder)
    prompt = [1, 5, 9, 14, 33, 70]
    ref = hf_greedy(hf, prompt, 10)
    full = eng.tokenizer.decode(ref)
    stop_word = full.split()[3]
    out = eng.generate(prompt, SamplingParams(max_tokens=10, ignore_eos=True, stop=[stop_word]))[0]
    assert out.finish_reason == "stop" and out.text == full[: full.find(stop_word)]
    out = eng.generate(prompt, SamplingParams(max_tokens=10, ignore_eos=True, stop_token_ids=[ref[2]]))[0]
    assert out.finish_reason == "stop" and out.token_ids == ref[: ref.index(ref[2]) + 1]


def test_metrics_and_kv_waste(folder):
    eng = engine(folder)
    for p in ([1, 5, 6], [1, 7, 8, 9, 10, 11, 12]):
        eng.add_request(p, greedy(6))
    eng.step()
    m = eng.metrics()
    assert m["running"] == 2 and m["kv_blocks_used"] == 1 + 2  # 4 tokens -> 1 block, 8 tokens -> 2
    assert m["kv_blocks_used"] + m["kv_blocks_free"] == m["kv_blocks_total"] == 64
    assert m["kv_slot_waste"] == pytest.approx(1 - 12 / 12)


def test_reset_prefix_cache_makes_the_same_prompt_compute_in_full(folder, hf):
    eng = engine(folder)
    first = eng.generate(SHARED + [40, 41], greedy())[0]
    eng.add_request(SHARED + [7], greedy(3))
    eng.step()
    assert not eng.reset_prefix_cache()  # a request in flight may share cached blocks: refused
    while eng.has_unfinished():
        eng.step()
    assert eng.reset_prefix_cache()
    again = eng.generate(SHARED + [40, 41], greedy())[0]
    assert again.metrics.cached_tokens == 0
    assert again.token_ids == first.token_ids == hf_greedy(hf, SHARED + [40, 41], 10)
    assert eng.block_manager.num_used_blocks == 0
