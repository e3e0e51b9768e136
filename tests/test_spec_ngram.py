"""Prompt-lookup proposer against a brute-force search, and the adaptive proposal-length controller."""
from __future__ import annotations

import random

from neural.sampling_params import SamplingParams
from neural.sequence import Sequence
from neural.spec_decode import SpeculativeConfig
from neural.spec_decode.controller import ProposalController
from neural.spec_decode.ngram_proposer import NgramIndex, NgramProposer


def brute_force(tokens: list[int], min_n: int, max_n: int, k: int) -> list[int]:
    for n in range(max_n, min_n - 1, -1):
        if len(tokens) <= n:
            continue
        suffix = tokens[-n:]
        for start in range(len(tokens) - n - 1, -1, -1):  # most recent earlier occurrence first
            if tokens[start : start + n] == suffix:
                return tokens[start + n : start + n + k]
    return []


def test_index_matches_brute_force_as_tokens_arrive():
    rng = random.Random(0)
    for trial in range(30):
        vocab = rng.choice([3, 5, 20])
        tokens = [rng.randrange(vocab) for _ in range(rng.randrange(1, 12))]
        index = NgramIndex(2, 4)
        for _ in range(40):  # grows like a generation: lookups interleaved with appends
            k = rng.randrange(1, 6)
            assert index.lookup(tokens, k) == brute_force(tokens, 2, 4, k), (trial, tokens)
            tokens.append(rng.randrange(vocab))


def test_proposes_the_continuation_of_the_longest_match():
    # suffix [7, 8, 9] occurs once earlier (followed by 10 11 12); [8, 9] also occurs later (followed by 1)
    seq = Sequence("r", None, [7, 8, 9, 10, 11, 12, 8, 9, 1, 5, 7, 8, 9], SamplingParams())
    assert NgramProposer(2, 3).propose([seq], [3]) == [[10, 11, 12]]
    assert NgramProposer(2, 2).propose([seq], [3]) == [[1, 5, 7]]  # only bigrams: the most recent [8, 9]
    nothing = Sequence("s", None, [1, 2, 3, 4, 5, 6], SamplingParams())
    assert NgramProposer(2, 5).propose([nothing], [4]) == [[]]


def test_controller_grows_shrinks_and_pauses():
    cfg = SpeculativeConfig(num_speculative_tokens=8, window=4, min_acceptance_rate=0.25, cooldown_steps=3)
    c = ProposalController(cfg)
    assert c.num_to_propose() == 4
    c.record(4, 4)
    assert c.k == 8  # all kept: reach further
    c.record(8, 8)
    assert c.k == 8  # capped
    c.record(8, 2)
    assert c.k == 3  # stop just past what was kept
    c.record(3, 0)  # window of 4: (4+8+2+0)/(4+8+8+3) > 0.25, keeps going
    assert not c.paused
    for _ in range(4):
        c.record(1, 0)  # nothing accepted over a full window: pause for cooldown_steps decode steps
    assert c.paused and c.num_pauses == 1
    assert [c.num_to_propose() for _ in range(4)] == [0, 0, 0, 1]
    for _ in range(4):
        c.record(1, 0)
    assert c.num_pauses == 2 and [c.num_to_propose() for _ in range(7)] == [0] * 6 + [1]  # doubled


def test_non_adaptive_keeps_length():
    c = ProposalController(SpeculativeConfig(num_speculative_tokens=5, adaptive=False))
    for _ in range(10):
        c.record(5, 0)
    assert c.num_to_propose() == 5 and not c.paused
