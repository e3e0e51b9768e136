"""BlockManager: allocation accounting, prefix-cache sharing verified by token ids, LRU eviction, rollback."""
from __future__ import annotations

from neural.block_manager import BlockManager
from neural.sampling_params import SamplingParams
from neural.sequence import Sequence


def seq(ids: list[int], rid: str = "r") -> Sequence:
    return Sequence(rid, None, ids, SamplingParams())


def compute_all(bm: BlockManager, s: Sequence) -> None:
    assert bm.allocate(s, len(s.token_ids))
    s.num_computed_tokens = len(s.token_ids)
    bm.commit(s)


def test_allocate_and_free_return_every_block():
    bm = BlockManager(num_blocks=8, block_size=4)
    s = seq(list(range(10)))
    assert bm.allocate(s, 10)
    assert len(s.block_table) == 3 and bm.num_free_blocks == 5
    assert len(set(s.block_table)) == 3
    assert not bm.allocate(seq(list(range(40)), "big"), 40)  # needs 10 > 5 free: nothing taken
    assert bm.num_free_blocks == 5
    bm.free_seq(s)
    assert bm.num_free_blocks == 8 and s.block_table == []


def test_prefix_hit_shares_full_blocks_and_leaves_one_token_to_compute():
    bm = BlockManager(num_blocks=16, block_size=4)
    a = seq(list(range(12)), "a")
    compute_all(bm, a)  # 3 full blocks registered
    b = seq(list(range(12)), "b")
    # identical 12-token prompt: only 2 blocks may be shared, the last token must be recomputed
    assert bm.match_prefix(b) == 8
    assert b.block_table == a.block_table[:2]
    assert all(bm.blocks[i].ref_count == 2 for i in a.block_table[:2])
    c = seq(list(range(8)) + [99, 98, 97, 96, 95], "c")
    assert bm.match_prefix(c) == 8
    d = seq([0, 1, 2, 99] + list(range(4, 13)), "d")  # differs in block 0: chained hash breaks everything
    assert bm.match_prefix(d) == 0
    for s in (a, b, c, d):
        bm.free_seq(s)
    assert bm.num_free_blocks == 16
    assert bm.prefix_queries == 2 + 3 + 3 and bm.prefix_hits == 4
    assert bm.prefix_cache_hit_rate == 0.5


def test_freed_cached_blocks_survive_until_reused_lru():
    bm = BlockManager(num_blocks=4, block_size=2)
    a = seq([1, 2, 3, 4, 5], "a")
    compute_all(bm, a)  # blocks: [1,2] [3,4] cached, [5] partial
    bm.free_seq(a)
    assert bm.num_free_blocks == 4 and len(bm.cached) == 2
    b = seq([1, 2, 3, 4, 9], "b")
    assert bm.match_prefix(b) == 4  # served from free-but-cached blocks
    bm.free_seq(b)
    # fill the pool with unrelated tokens: the uncached block goes first, then the LRU cached ones
    c = seq([7] * 8, "c")
    assert bm.allocate(c, 8)
    assert len(bm.cached) == 0  # every cached block was overwritten and forgotten
    assert bm.match_prefix(seq([1, 2, 3, 4, 9], "x")) == 0
    bm.free_seq(c)


def test_hash_hit_with_different_tokens_is_not_served():
    bm = BlockManager(num_blocks=8, block_size=2)
    a = seq([1, 2, 3], "a")
    compute_all(bm, a)
    block = bm.blocks[a.block_table[0]]
    block.token_ids = (9, 9)  # simulate a hash collision: the stored tokens differ
    assert bm.match_prefix(seq([1, 2, 3], "b")) == 0


def test_rollback_frees_tail_blocks_and_uncaches_partial_block():
    bm = BlockManager(num_blocks=8, block_size=4)
    s = seq([1, 2, 3], "s")
    for t in range(4, 11):  # grow to 10 tokens, as decode would
        s.append_token(t)
    compute_all(bm, s)  # 3 blocks, 2 full and cached
    assert len(bm.cached) == 2 and bm.num_free_blocks == 5
    bm.rollback(s, 5)  # back to 5 tokens: block 2 freed, block 1 becomes partial
    assert s.token_ids == [1, 2, 3, 4, 5] and s.num_computed_tokens == 5
    assert len(s.block_table) == 2 and bm.num_free_blocks == 6
    assert len(bm.cached) == 1 and s.num_hashed_blocks == 1
    bm.free_seq(s)
    assert bm.num_free_blocks == 8


def test_reset_prefix_cache_forgets_cached_blocks_only_when_none_is_in_use():
    bm = BlockManager(num_blocks=8, block_size=4)
    a = seq(list(range(12)), "a")
    compute_all(bm, a)
    assert len(bm.cached) == 3
    assert not bm.reset_prefix_cache()  # a holds its blocks: refused, nothing dropped
    b = seq(list(range(12)), "b")
    assert len(bm.cached) == 3 and bm.match_prefix(b) == 8
    bm.free_seq(a)
    assert not bm.reset_prefix_cache()  # b still shares two of them
    bm.free_seq(b)
    assert bm.reset_prefix_cache()
    assert bm.cached == {} and all(blk.hash is None and blk.token_ids is None for blk in bm.blocks)
    assert bm.num_free_blocks == 8
    assert bm.match_prefix(seq(list(range(12)), "c")) == 0  # the same prompt now misses
