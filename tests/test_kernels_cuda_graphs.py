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
