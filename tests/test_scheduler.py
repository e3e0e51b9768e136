"""Scheduler: token budget, chunked prefill, max_num_seqs, preemption by recompute (no model needed)."""
from __future__ import annotations

from neural.block_manager import BlockManager
from neural.sampling_params import SamplingParams
from neural.scheduler import Scheduler
from neural.sequence import Sequence, SequenceStatus


def seq(n: int, rid: str) -> Sequence:
    return Sequence(rid, None, list(range(3, 3 + n)), SamplingParams())


def advance(batch) -> None:
    """Pretend the model ran: mark tokens computed; sequences at their end 'sample' token 7."""
    for s, n in zip(batch.seqs, batch.num_new_tokens):
        s.num_computed_tokens += n
        if s.num_computed_tokens == len(s.token_ids):
            s.append_token(7)


def test_chunked_prefill_respects_token_budget_and_joins_decodes():
    bm = BlockManager(64, 4)
    sch = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=10, max_model_len=128)
    a, b = seq(6, "a"), seq(22, "b")
    sch.add(a)
    sch.add(b)
    batch = sch.schedule()
    assert [s.request_id for s in batch.seqs] == ["a", "b"] and batch.num_new_tokens == [6, 4]
    advance(batch)
    batch = sch.schedule()  # a decodes (1 token), b's prefill continues with the rest of the budget
    assert batch.num_new_tokens == [1, 9] and not batch.is_decode
    advance(batch)
    batch = sch.schedule()
    assert batch.num_new_tokens == [1, 9]
    advance(batch)
    batch = sch.schedule()
    assert batch.num_new_tokens == [1, 1] and batch.is_decode  # b finished its 22-token prefill and sampled
    assert len(b.token_ids) == 23


def test_max_num_seqs_caps_running_batch():
    sch = Scheduler(BlockManager(64, 4), max_num_seqs=2, max_num_batched_tokens=100, max_model_len=128)
    for i in range(3):
        sch.add(seq(3, str(i)))
    batch = sch.schedule()
    assert len(batch) == 2 and len(sch.waiting) == 1


def test_preemption_frees_newest_and_recomputes_later():
    bm = BlockManager(num_blocks=4, block_size=4)  # 16 slots in all
    sch = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=100, max_model_len=16)
    a, b = seq(8, "a"), seq(8, "b")
    sch.add(a)
    sch.add(b)
    advance(sch.schedule())  # each holds 2 blocks: pool full
    assert bm.num_free_blocks == 0
    batch = sch.schedule()  # both at 9 tokens: a needs a third block -> b (newest) is preempted
    assert batch.seqs == [a] and batch.preempted == [b]
    assert b.status == SequenceStatus.WAITING and b.block_table == [] and b.num_computed_tokens == 0
    assert sch.waiting[0] is b and len(b.token_ids) == 9  # keeps its generated token for recompute
    advance(batch)
    sch.finish(a, "length")
    assert bm.num_free_blocks == 4
    batch = sch.schedule()
    assert batch.seqs == [b] and batch.num_new_tokens == [9]  # prompt + generated recomputed at once


def commit_advance(bm: BlockManager, batch) -> None:
    """advance() plus what the engine does after a step: register completed full blocks in the prefix cache."""
    advance(batch)
    for s in batch.seqs:
        bm.commit(s)


def test_in_batch_shared_prefix_waits_one_step_then_hits_the_cache():
    from neural.scheduler import IN_BATCH_PREFIX_MIN_TOKENS

    bm = BlockManager(64, 4)
    sch = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=200, max_model_len=128)
    shared = list(range(3, 3 + IN_BATCH_PREFIX_MIN_TOKENS + 4))  # 36 tokens: 9 full blocks
    a = Sequence("a", None, shared + [90, 91], SamplingParams())
    b = Sequence("b", None, shared + [92], SamplingParams())
    c = Sequence("c", None, [80, 81, 82, 83, 84], SamplingParams())
    short = Sequence("short", None, shared[:IN_BATCH_PREFIX_MIN_TOKENS - 4] + [93], SamplingParams())  # 7 blocks
    for s in (a, b, c, short):
        sch.add(s)
    batch = sch.schedule()
    assert [s.request_id for s in batch.seqs] == ["a", "c", "short"]  # b would recompute 36 of a's tokens
    assert list(sch.waiting) == [b] and b.num_prefix_deferrals == 1 and b.block_table == []
    commit_advance(bm, batch)
    batch = sch.schedule()
    assert batch.seqs[-1] is b and batch.num_new_tokens[-1] == 1  # 36 cached: only its last token is computed
    assert b.metrics.cached_tokens == 36 and not sch.waiting


def test_in_batch_prefix_wait_is_capped_and_off_without_prefix_caching():
    from neural.scheduler import MAX_PREFIX_DEFERRALS

    shared = list(range(3, 43))
    for caching, deferrals in ((True, MAX_PREFIX_DEFERRALS), (False, 0)):
        bm = BlockManager(64, 4, enable_prefix_caching=caching)
        sch = Scheduler(bm, max_num_seqs=8, max_num_batched_tokens=200, max_model_len=128)
        a, b = Sequence("a", None, shared + [90], SamplingParams()), Sequence("b", None, shared + [91], SamplingParams())
        b.num_prefix_deferrals = deferrals  # waited its maximum already (or would never wait)
        sch.add(a)
        sch.add(b)
        assert sch.schedule().seqs == [a, b]
        assert b.num_prefix_deferrals == deferrals
