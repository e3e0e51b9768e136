"""DecodeGraphs pads batches into static buffers and returns the right rows (eager replay: no GPU here)."""
import pytest
import torch

from neural.cuda_graphs import DecodeGraphs
from neural.kernels.decode_attention import paged_attention_decode_ref


def _attention_step(k_cache, v_cache, q_table):
    """A decode step whose output depends on every input: query row by token id, paged attention over the cache."""
    def step(input_ids, positions, slot_mapping, block_tables, context_lens):
        q = q_table[input_ids] + positions[:, None, None].float() * 0.01
        return paged_attention_decode_ref(q, k_cache, v_cache, block_tables, context_lens, 0.5)
    return step


def test_padded_replay_equals_the_eager_step() -> None:
    torch.manual_seed(0)
    k_cache, v_cache = torch.randn(6, 4, 1, 8), torch.randn(6, 4, 1, 8)
    step = _attention_step(k_cache, v_cache, torch.randn(10, 2, 8))
    graphs = DecodeGraphs(step, batch_sizes=[4, 1, 2], max_blocks_per_seq=3)
    graphs.capture("cpu")
    assert graphs.captured_sizes() == []  # CPU: nothing is captured, run() is the eager step
    graphs.capture("cpu", eager_replay=True)
    assert graphs.captured_sizes() == [1, 2, 4]
    ids, pos = torch.tensor([3, 7, 1]), torch.tensor([4, 9, 0])
    tables = torch.tensor([[5, 2], [0, 1], [3, 4]], dtype=torch.int32)
    lens = torch.tensor([5, 8, 1], dtype=torch.int32)
    slots = torch.tensor([-1, -1, -1])
    out = graphs.run(ids, pos, slots, tables, lens)  # batch 3 -> padded into the batch-4 buffers
    assert out.shape == (3, 2, 8)
    torch.testing.assert_close(out, step(ids, pos, slots, tables, lens))
    # a later, smaller batch must not see stale rows of the previous one
    out1 = graphs.run(ids[:1], pos[:1], slots[:1], tables[:1, :1], torch.tensor([2], dtype=torch.int32))
    torch.testing.assert_close(out1, step(ids[:1], pos[:1], slots[:1], tables[:1, :1], torch.tensor([2])))


def test_bad_configuration_is_rejected() -> None:
    with pytest.raises(ValueError, match="batch_sizes must be positive"):
        DecodeGraphs(lambda *a: a[0], batch_sizes=[0], max_blocks_per_seq=1)
    with pytest.raises(ValueError, match="max_blocks_per_seq must be >= 1"):
        DecodeGraphs(lambda *a: a[0], batch_sizes=[1], max_blocks_per_seq=0)


# ---------------------------------------------------------------------------- wired into the engine
from collections import Counter  # noqa: E402

from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model  # noqa: E402
from neural import Engine, EngineConfig, SamplingParams  # noqa: E402
from neural.errors import EngineError  # noqa: E402

CAPTURED = [1, 2, 4, 8]
# (step at which the request arrives, prompt, max_tokens): staggered arrivals and finishes give pure-decode
# batches of 1..10 sequences: 3 and 5 replay padded into the 4 and 8 buffers, 9 and 10 exceed every size
PLAN = [(0, [1, 5, 6, 7, 8], 30), (2, [1, 9, 10], 8), (2, [1, 11, 12, 13, 14, 15, 16], 24)] + [
    (6 + i // 4, [1] + [20 + 3 * i + j for j in range(2 + i % 5)], 6 + 2 * i) for i in range(7)
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("llama_graphs"), "llama", seed=3)


def _engine(folder, **kw) -> Engine:
    return Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20, max_num_seqs=10, **kw))


def _drive(eng: Engine) -> tuple[list[list[int]], list[tuple[int, bool]]]:
    """Run PLAN; returns each request's tokens and (batch size, is_decode) of every forward step."""
    steps: list[tuple[int, bool]] = []
    prepare = eng.runner.prepare

    def spy(seqs, num_new_tokens, *rest):
        steps.append((len(seqs), all(n == 1 for n in num_new_tokens)))
        return prepare(seqs, num_new_tokens, *rest)

    eng.runner.prepare = spy
    done: dict[str, list[int]] = {}
    step = 0
    while step <= max(at for at, _, _ in PLAN) or eng.has_unfinished():
        for i, (at, prompt, n) in enumerate(PLAN):
            if at == step:
                eng.add_request(prompt, SamplingParams(max_tokens=n, ignore_eos=True), request_id=f"r{i}")
        done.update((o.request_id, o.token_ids) for o in eng.step() if o.finished)
        step += 1
    return [done[f"r{i}"] for i in range(len(PLAN))], steps


def test_engine_decode_through_padded_graphs_equals_eager_and_hf(folder, monkeypatch) -> None:
    monkeypatch.setenv("VERIRAG_KERNELS", "reference")  # before the engine: its KV store must skip slot -1
    eager = _engine(folder)
    assert eager.runner.graphs is None  # CPU: the engine captures nothing
    want, eager_steps = _drive(eager)

    eng = _engine(folder)
    assert eng.runner.capture_decode_graphs(CAPTURED, eager_replay=True) == CAPTURED
    calls: list[int] = []
    graphs_run = eng.runner.graphs.run
    eng.runner.graphs.run = lambda ids, *rest: calls.append(ids.shape[0]) or graphs_run(ids, *rest)
    got, steps = _drive(eng)

    assert got == want
    hf = load_hf_reference(folder)
    assert got == [hf_greedy(hf, prompt, n) for _, prompt, n in PLAN]
    decode = [b for b, is_decode in steps if is_decode]
    assert steps == eager_steps and {3, 5, 9, 10} <= set(decode)  # the plan reaches padded and too-large sizes
    assert calls == decode  # every decode step goes to the graphs, no prefill step ever does
    assert eng.runner.num_graph_steps == len(decode)
    padded = Counter(min(s for s in CAPTURED if s >= b) for b in decode if b <= max(CAPTURED))
    assert eng.runner.graphs.num_replays == dict(padded)
    assert eng.runner.graphs.num_eager == sum(b > max(CAPTURED) for b in decode)
    assert eng.block_manager.num_used_blocks == 0 and eager.block_manager.num_used_blocks == 0


def test_eager_replay_on_cpu_fast_paths_is_refused(folder, monkeypatch) -> None:
    monkeypatch.delenv("VERIRAG_KERNELS", raising=False)
    eng = _engine(folder)
    assert eng.runner.capture_decode_graphs([1, 2]) == []  # CPU without the test hook: nothing, plain eager
    with pytest.raises(EngineError, match="VERIRAG_KERNELS=reference"):
        eng.runner.capture_decode_graphs([1, 2], eager_replay=True)
    assert eng.runner.graphs is None


def test_failed_capture_warns_and_decode_stays_eager(folder, monkeypatch) -> None:
    monkeypatch.setenv("VERIRAG_KERNELS", "reference")
    eng = _engine(folder, enforce_eager=True)
    runner = eng.runner
    monkeypatch.setattr(runner, "device", torch.device("cuda"))  # a capture that fails (no CUDA here)
    with pytest.warns(UserWarning, match="CUDA graph capture failed"):
        assert runner.capture_decode_graphs([1, 2]) == []
    monkeypatch.setattr(runner, "device", torch.device("cpu"))
    assert runner.graphs is None and runner.graph_capture_error
    hf = load_hf_reference(folder)
    out = eng.generate([1, 7, 8, 9], SamplingParams(max_tokens=5, ignore_eos=True))[0]
    assert out.token_ids == hf_greedy(hf, [1, 7, 8, 9], 5) and runner.num_graph_steps == 0


def test_graph_batch_sizes_default_and_bad_values() -> None:
    assert EngineConfig().graph_batch_sizes() == [1, 2, 4, 8, 16, 32, 64]
    assert EngineConfig(max_num_seqs=48).graph_batch_sizes() == [1, 2, 4, 8, 16, 32, 48]
    assert EngineConfig(cuda_graph_batch_sizes=[8, 1, 8]).graph_batch_sizes() == [1, 8]
    for bad in ((), (0,), (65,), ("4",), (True,), 4):
        with pytest.raises(EngineError, match="cuda_graph_batch_sizes"):
            EngineConfig(cuda_graph_batch_sizes=bad)
    with pytest.raises(EngineError, match="enforce_eager must be True or False"):
        EngineConfig(enforce_eager="yes")
