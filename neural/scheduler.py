"""Scheduler: continuous batching under a per-step token budget, chunked prefill, preemption by recompute.

Every step each scheduled sequence computes ``num_new`` tokens starting at ``num_computed_tokens``: one
for a decoding sequence, a chunk of its prompt for a prefilling one (the same rule covers prefill after a
prefix-cache hit, chunked prefill and recompute after preemption). Running sequences go first (oldest
first); when blocks run out the newest running sequence is preempted — its blocks freed, its tokens
(prompt + generated so far) recomputed later — so the engine never crashes on a full cache.

In-batch prefix sharing (SGLang's in-batch prefix caching): the prefix cache only serves blocks already
computed, so requests that arrive together with a common prefix (a RAG system prompt and the same
retrieved passages) would all compute it in the same step. A waiting request whose next
``IN_BATCH_PREFIX_MIN_TOKENS`` or more prompt tokens are being computed by a request admitted this step
waits one step and then hits the cache; at most ``MAX_PREFIX_DEFERRALS`` times, so none starves.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from neural.block_manager import BlockManager
from neural.sequence import Sequence, SequenceStatus

IN_BATCH_PREFIX_MIN_TOKENS = 32  # SGLang's deprioritize threshold: below it a step's latency is worth more
MAX_PREFIX_DEFERRALS = 8


@dataclass
class ScheduledBatch:
    seqs: list[Sequence]
    num_new_tokens: list[int]  # tokens each sequence computes this step
    preempted: list[Sequence]

    @property
    def is_decode(self) -> bool:
        return all(n == 1 for n in self.num_new_tokens)

    @property
    def num_tokens(self) -> int:
        return sum(self.num_new_tokens)

    def __len__(self) -> int:
        return len(self.seqs)


class Scheduler:
    def __init__(
        self, block_manager: BlockManager, max_num_seqs: int, max_num_batched_tokens: int, max_model_len: int
    ) -> None:
        self.bm = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.max_model_len = max_model_len
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0

    def add(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.WAITING
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self, lookahead: int = 0) -> ScheduledBatch:
        """Pick this step's work. ``lookahead`` extra slots per decoding sequence (speculative decoding)."""
        budget = self.max_num_batched_tokens
        seqs: list[Sequence] = []
        counts: list[int] = []
        preempted: list[Sequence] = []
        pending: set[int] = set()  # hashes of the full blocks this step's sequences complete

        # 1. running sequences, oldest first; preempt from the newest end when blocks run out
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_uncomputed, budget)
            while not self.bm.allocate(seq, seq.num_computed_tokens + n + (lookahead if n == 1 else 0)):
                victim = self.running.pop()
                self._preempt(victim)
                preempted.append(victim)
                if victim is seq:
                    break
            else:
                seqs.append(seq)
                counts.append(n)
                budget -= n
                i += 1
                if n > 1:
                    pending.update(self.bm.completed_block_hashes(seq, seq.num_computed_tokens + n))
                continue
            break  # seq itself was preempted: it was the newest, nothing after it

        # 2. admit waiting sequences while there is room (never in a step that had to preempt)
        deferred: list[Sequence] = []
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs and not preempted:
            seq = self.waiting[0]
            if not seq.block_table:
                cached = self.bm.match_prefix(seq)
                if not seq.admitted:
                    seq.metrics.cached_tokens = cached
                if (
                    seq.num_prefix_deferrals < MAX_PREFIX_DEFERRALS
                    and self.bm.num_pending_prefix_tokens(seq, pending) >= IN_BATCH_PREFIX_MIN_TOKENS
                ):
                    self.bm.free_seq(seq)
                    seq.num_prefix_deferrals += 1
                    deferred.append(self.waiting.popleft())
                    continue
            n = min(seq.num_uncomputed, budget)
            if not self.bm.allocate(seq, seq.num_computed_tokens + n):
                self.bm.free_seq(seq)  # give back the prefix blocks it was about to share
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            seq.admitted = True
            self.running.append(seq)
            seqs.append(seq)
            counts.append(n)
            budget -= n
            pending.update(self.bm.completed_block_hashes(seq, seq.num_computed_tokens + n))
        self.waiting.extendleft(reversed(deferred))  # deferred requests keep their place in the queue
        return ScheduledBatch(seqs, counts, preempted)

    def _preempt(self, seq: Sequence) -> None:
        self.bm.free_seq(seq)
        seq.status = SequenceStatus.WAITING
        seq.metrics.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(seq)

    def finish(self, seq: Sequence, reason: str) -> None:
        """Retire ``seq`` (from running or waiting) and release its blocks."""
        seq.status = SequenceStatus.FINISHED
        seq.finish_reason = reason
        if seq in self.running:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        self.bm.free_seq(seq)
