"""Speculator: the engine-side verify step — propose, fit proposals into the batch, score, accept, roll back.

Protocol with the engine, per step:
1. ``propose(running)`` before scheduling: an eligible decoding sequence (one uncomputed token) gets up
   to k proposed tokens appended to ``token_ids``, so the unchanged scheduler budgets and allocates
   KV slots for ``1 + k`` tokens as it would for a prefill chunk.
2. ``fit_to_batch(batch)`` after scheduling: proposals of sequences that were preempted or not
   scheduled are removed, and a sequence given fewer tokens than ``1 + k`` keeps only what fits.
3. ``logits_rows(batch)``: the target forward returns logits for every query row of a speculating
   sequence (k + 1 rows: after the last verified token and after each proposal) and the last row of
   the others — one target forward for the whole continuous batch.
4. ``verify(batch, logits)``: accept a prefix of each proposal (greedy match or rejection sampling),
   roll the KV back past it (tail blocks freed; only verified tokens are ever hashed for the prefix
   cache), and hand the engine the tokens to emit; the others' logits go to the ordinary sampler.
"""
from __future__ import annotations

import torch

from neural.block_manager import BlockManager
from neural.sampler import apply_repetition_penalty, filter_logits
from neural.scheduler import ScheduledBatch
from neural.sequence import Sequence, SequenceStatus
from neural.spec_decode.config import SpeculativeConfig
from neural.spec_decode.controller import ProposalController
from neural.sequence import SpecDecodeMetrics
from neural.spec_decode.proposer import Proposer
from neural.spec_decode.rejection_sampler import greedy_verify, rejection_sample

Emitted = list[tuple[int, float | None]]  # (token id, its logprob if the request asked)


class _State:
    __slots__ = ("seq", "controller", "metrics", "pending")

    def __init__(self, seq: Sequence, cfg: SpeculativeConfig) -> None:
        self.seq = seq
        self.controller = ProposalController(cfg)
        self.metrics = SpecDecodeMetrics()
        self.pending = 0  # proposed tokens sitting unverified at the tail of seq.token_ids


def _active(processor: object, generated_ids: list[int]) -> bool:
    active = getattr(processor, "active", None)
    return active is None or bool(active(generated_ids))


class Speculator:
    def __init__(self, cfg: SpeculativeConfig, proposer: Proposer, block_manager: BlockManager,
                 max_model_len: int) -> None:
        self.cfg = cfg
        self.proposer = proposer
        self.bm = block_manager
        self.max_model_len = max_model_len
        self.metrics = SpecDecodeMetrics()
        self.states: dict[str, _State] = {}

    @staticmethod
    def eligible(seq: Sequence) -> bool:
        # logits processors (grammar-constrained decoding) may keep state across calls: they are only
        # ever run on the real sequence, one token at a time, while they are active (see SamplingParams)
        sp = seq.sampling
        return sp.speculative and not any(_active(p, seq.generated_ids) for p in sp.logits_processors)

    def request_metrics(self, seq: Sequence) -> SpecDecodeMetrics | None:
        st = self.states.get(seq.request_id)
        return st.metrics if st is not None else None

    # ------------------------------------------------------------------ 1-2: proposals into the batch
    def propose(self, running: list[Sequence]) -> None:
        seqs, ks, states = [], [], []
        for seq in running:
            if seq.num_uncomputed != 1 or not self.eligible(seq):
                continue
            st = self.states.get(seq.request_id)
            if st is None or st.seq is not seq:  # new request (an id may be reused once finished)
                if st is not None:
                    self.proposer.release(st.seq)
                st = self.states[seq.request_id] = _State(seq, self.cfg)
                seq.metrics.spec_decode = st.metrics
            # never propose past max_tokens or max_model_len (the bonus token needs one more slot)
            room = min(seq.sampling.max_tokens - seq.num_generated, self.max_model_len - len(seq)) - 1
            k = min(st.controller.num_to_propose(), room)
            if k > 0:
                seqs.append(seq)
                ks.append(k)
                states.append(st)
        if not seqs:
            return
        for seq, st, tokens in zip(seqs, states, self.proposer.propose(seqs, ks)):
            seq.token_ids.extend(tokens)
            st.pending = len(tokens)

    def fit_to_batch(self, batch: ScheduledBatch) -> None:
        scheduled = {id(s): n for s, n in zip(batch.seqs, batch.num_new_tokens)}
        for st in self.states.values():
            if st.pending == 0:
                continue
            keep = max(0, min(st.pending, scheduled.get(id(st.seq), 0) - 1))
            if keep < st.pending:
                del st.seq.token_ids[len(st.seq.token_ids) - (st.pending - keep) :]
                st.pending = keep

    # ------------------------------------------------------------------ 3-4: score and accept
    def logits_rows(self, batch: ScheduledBatch) -> list[int] | None:
        if not any(self._pending(s) for s in batch.seqs):
            return None
        rows: list[int] = []
        start = 0
        for seq, n in zip(batch.seqs, batch.num_new_tokens):
            k = self._pending(seq)
            rows.extend(range(start + n - 1 - k, start + n))
            start += n
        return rows

    def verify(
        self, batch: ScheduledBatch, logits: torch.Tensor, generator: torch.Generator | None
    ) -> tuple[torch.Tensor, dict[int, Emitted]]:
        """Returns (one logits row per batch sequence for the ordinary sampler, {batch index: tokens})."""
        logits = logits.cpu()
        plain_rows, emitted, row = [], {}, 0
        for i, seq in enumerate(batch.seqs):
            k = self._pending(seq)
            if k == 0:
                plain_rows.append(row)
                row += 1
                continue
            emitted[i] = self._verify_one(self.states[seq.request_id], logits[row : row + k + 1], generator)
            plain_rows.append(row + k)  # placeholder row, never sampled
            row += k + 1
        return logits[plain_rows], emitted

    def _verify_one(self, st: _State, rows: torch.Tensor, generator: torch.Generator | None) -> Emitted:
        seq, k = st.seq, st.pending
        base = len(seq.token_ids) - k  # the proposals are token_ids[base:]
        draft = seq.token_ids[base:]
        sp = seq.sampling
        if not sp.needs_logits_work:
            a, nxt = greedy_verify(rows.argmax(-1).tolist(), draft)
            logps: list[float | None] = [None] * (a + 1)
        else:
            processed = torch.stack([self._process(rows[j], seq.token_ids[: base + j], sp) for j in range(k + 1)])
            if sp.greedy:
                a, nxt = greedy_verify(processed.argmax(-1).tolist(), draft)
                logp = processed.log_softmax(-1)
            else:
                probs = processed.softmax(-1)
                gen = seq.generator if seq.generator is not None else generator
                a, nxt = rejection_sample(probs, draft, None, gen)
                logp = probs.log()
            chosen = draft[:a] + [nxt]
            logps = [float(logp[j, t]) if sp.logprobs else None for j, t in enumerate(chosen)]
        self.proposer.on_verified(seq, a)
        # the forward computed K/V through the last proposal; keep the verified prefix only. Rejected
        # positions were never committed (hashed), and blocks past the kept length return to the pool.
        seq.num_computed_tokens = len(seq.token_ids)
        self.bm.rollback(seq, k - a)
        self.bm.commit(seq)
        del seq.token_ids[base:]  # the engine re-appends the accepted tokens one by one (stop checks)
        st.pending = 0
        st.controller.record(k, a)
        st.metrics.record(k, a, a + 1)
        self.metrics.record(k, a, a + 1)
        return list(zip(draft[:a] + [nxt], logps))

    @staticmethod
    def _process(logits: torch.Tensor, context: list[int], sp) -> torch.Tensor:
        """The sampler's transformation for one position, given the tokens before it (see neural.sampler)."""
        if sp.repetition_penalty != 1.0:
            logits = apply_repetition_penalty(logits.clone(), context, sp.repetition_penalty)
        if sp.greedy:
            return logits
        return filter_logits(logits / sp.temperature, sp.top_k, sp.top_p, sp.min_p)

    def _pending(self, seq: Sequence) -> int:
        st = self.states.get(seq.request_id)
        return st.pending if st is not None and st.seq is seq else 0

    # ------------------------------------------------------------------ lifetime
    def release_finished(self) -> None:
        """Drop the state of finished requests (and any draft-model KV they hold)."""
        done = [rid for rid, st in self.states.items() if st.seq.status == SequenceStatus.FINISHED]
        for rid in done:
            self.proposer.release(self.states.pop(rid).seq)
