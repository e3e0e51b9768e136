"""BlockManager: the paged KV pool's bookkeeping — ref counts, prefix caching, LRU reuse of freed blocks.

Prefix caching: a *full* block whose K/V has been computed is registered under a chained hash
``hash((parent_hash, tokens))``; a new sequence whose leading full blocks hash (and token-compare) equal
shares those blocks (ref_count += 1) and skips computing them. A freed block keeps its hash and goes to
the tail of an LRU free list; allocation takes from the head, so the least recently used cached block
is the first to be overwritten (and only then forgotten by the cache).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

from neural.sequence import Sequence


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "parent_hash", "token_ids")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0
        self.hash: int | None = None
        self.parent_hash: int | None = None
        self.token_ids: tuple[int, ...] | None = None  # kept to verify a hash hit (no collisions served)


def chain_hash(parent: int | None, tokens: tuple[int, ...]) -> int:
    return hash((parent, tokens))


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True) -> None:
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.enable_prefix_caching = enable_prefix_caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))  # LRU order
        self.cached: dict[int, int] = {}  # chain hash -> block id
        self.prefix_queries = 0  # full prompt blocks looked up
        self.prefix_hits = 0

    # ------------------------------------------------------------------ accounting
    @property
    def num_free_blocks(self) -> int:
        return len(self.free)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self.free)

    def blocks_needed(self, num_tokens: int) -> int:
        return (num_tokens + self.block_size - 1) // self.block_size

    # ------------------------------------------------------------------ allocation
    def _take_free(self) -> int:
        block_id, _ = self.free.popitem(last=False)
        block = self.blocks[block_id]
        if block.hash is not None and self.cached.get(block.hash) == block_id:
            del self.cached[block.hash]  # evicted: its content is about to be overwritten
        block.hash, block.token_ids = None, None
        block.ref_count = 1
        return block_id

    def _ref(self, block_id: int) -> None:
        block = self.blocks[block_id]
        if block.ref_count == 0:
            del self.free[block_id]
        block.ref_count += 1

    def match_prefix(self, seq: Sequence) -> int:
        """On admission: share cached leading blocks; returns the number of tokens they cover.

        At least one token is always left to compute, since its logits are what the step samples from.
        """
        assert not seq.block_table, "match_prefix on a sequence that already holds blocks"
        if not self.enable_prefix_caching:
            return 0
        max_blocks = (len(seq.token_ids) - 1) // self.block_size
        self.prefix_queries += max_blocks  # hit rate = share of eligible full prompt blocks served cached
        for _, parent, tokens, h in self._unhashed_blocks(seq, max_blocks):
            block_id = self.cached.get(h)
            if block_id is None:
                break
            block = self.blocks[block_id]
            if block.token_ids != tokens or block.parent_hash != parent:
                break
            self.prefix_hits += 1
            self._ref(block_id)
            seq.block_table.append(block_id)
            seq.block_hashes.append(h)
        seq.num_hashed_blocks = len(seq.block_table)
        seq.num_computed_tokens = len(seq.block_table) * self.block_size
        return seq.num_computed_tokens

    def _unhashed_blocks(
        self, seq: Sequence, end_block: int
    ) -> Iterator[tuple[int, int | None, tuple[int, ...], int]]:
        """(index, parent hash, tokens, chain hash) of ``seq``'s full blocks after its hashed ones, up to
        ``end_block``: the one chain that matching, committing and in-batch sharing all walk."""
        bs = self.block_size
        parent = seq.block_hashes[-1] if seq.block_hashes else None
        for i in range(len(seq.block_hashes), end_block):
            tokens = tuple(seq.token_ids[i * bs : (i + 1) * bs])
            h = chain_hash(parent, tokens)
            yield i, parent, tokens, h
            parent = h

    def completed_block_hashes(self, seq: Sequence, num_tokens: int) -> list[int]:
        """Chain hashes of the full blocks ``seq`` completes (and will commit) once ``num_tokens`` are computed."""
        if not self.enable_prefix_caching:
            return []
        end = min(num_tokens, len(seq.token_ids)) // self.block_size
        return [h for _, _, _, h in self._unhashed_blocks(seq, end)]

    def num_pending_prefix_tokens(self, seq: Sequence, pending: set[int]) -> int:
        """After match_prefix: how many of ``seq``'s next prompt tokens sit in blocks hashed in ``pending``
        (blocks another sequence computes in this step), counted in whole blocks from the first uncached one."""
        if not pending:
            return 0
        shared = 0
        end = (len(seq.token_ids) - 1) // self.block_size  # as match_prefix: one token left to compute
        for _, _, _, h in self._unhashed_blocks(seq, end):
            if h not in pending:
                break
            shared += self.block_size
        return shared

    def can_allocate(self, seq: Sequence, num_tokens: int) -> bool:
        """Whether ``seq`` can grow its table to hold ``num_tokens`` tokens."""
        return self.blocks_needed(num_tokens) - len(seq.block_table) <= len(self.free)

    def allocate(self, seq: Sequence, num_tokens: int) -> bool:
        """Grow ``seq``'s block table to cover ``num_tokens`` tokens; False (nothing taken) if out of blocks."""
        extra = self.blocks_needed(num_tokens) - len(seq.block_table)
        if extra > len(self.free):
            return False
        for _ in range(extra):
            seq.block_table.append(self._take_free())
        return True

    def commit(self, seq: Sequence) -> None:
        """Register ``seq``'s newly computed full blocks in the prefix cache."""
        if not self.enable_prefix_caching:
            return
        full = seq.num_computed_tokens // self.block_size
        for i, parent, tokens, h in self._unhashed_blocks(seq, full):  # block_hashes: num_hashed_blocks long
            block = self.blocks[seq.block_table[i]]
            block.hash, block.parent_hash, block.token_ids = h, parent, tokens
            self.cached.setdefault(h, block.block_id)  # an identical earlier block stays the canonical one
            seq.block_hashes.append(h)
        seq.num_hashed_blocks = max(seq.num_hashed_blocks, full)

    def free_seq(self, seq: Sequence) -> None:
        """Release all of ``seq``'s blocks (finish, abort, preemption). Cached ones stay reusable."""
        # reversed: a sequence's tail blocks are the least likely to be shared again, so evict them first
        for block_id in reversed(seq.block_table):
            self._unref(block_id)
        seq.block_table = []
        seq.block_hashes = []
        seq.num_hashed_blocks = 0
        seq.num_computed_tokens = 0

    def _unref(self, block_id: int) -> None:
        block = self.blocks[block_id]
        block.ref_count -= 1
        assert block.ref_count >= 0, f"block {block_id} freed twice"
        if block.ref_count == 0:
            if block.hash is None:
                self.free[block_id] = None
                self.free.move_to_end(block_id, last=False)  # uncached: reuse first, keep cached ones longer
            else:
                self.free[block_id] = None

    def rollback(self, seq: Sequence, num_tokens: int) -> None:
        """Drop ``seq``'s last ``num_tokens`` tokens (speculative rejection): trims tokens, counters, blocks."""
        if num_tokens <= 0:
            return
        if num_tokens > len(seq.token_ids) - seq.num_prompt_tokens:
            raise ValueError("rollback past the prompt")
        del seq.token_ids[-num_tokens:]
        seq.num_computed_tokens = min(seq.num_computed_tokens, len(seq.token_ids))
        keep = self.blocks_needed(len(seq.token_ids))
        for block_id in seq.block_table[keep:]:
            self._unref(block_id)
        del seq.block_table[keep:]
        full = len(seq.token_ids) // self.block_size
        if seq.num_hashed_blocks > full:
            # the now-partial block will be overwritten: it must no longer be served as cached
            for i in range(full, seq.num_hashed_blocks):
                if i < len(seq.block_table):
                    block = self.blocks[seq.block_table[i]]
                    if block.hash is not None and self.cached.get(block.hash) == block.block_id:
                        del self.cached[block.hash]
                    block.hash, block.token_ids = None, None
            del seq.block_hashes[full:]
            seq.num_hashed_blocks = full

    def reset_prefix_cache(self) -> bool:
        """Forget every cached block (vLLM's reset_prefix_cache): later prompts compute from scratch.

        Only while no block is in use (a running sequence's blocks may be shared through their hashes);
        returns False, changing nothing, otherwise. Benchmarks call it between runs of the same prompts.
        """
        if self.num_used_blocks:
            return False
        for block in self.blocks:
            block.hash, block.parent_hash, block.token_ids = None, None, None
        self.cached.clear()
        return True

    @property
    def prefix_cache_hit_rate(self) -> float:
        return self.prefix_hits / self.prefix_queries if self.prefix_queries else 0.0
