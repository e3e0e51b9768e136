"""Speculative rejection sampling keeps the target distribution exactly: chi-square goodness-of-fit tests
on a toy Markov model (pure function) and on the engine (tiny random model, top-k = 4 vocabulary)."""
from __future__ import annotations

import pytest
import torch

from engine_tiny_models import make_tiny_model
from neural import Engine, EngineConfig, SamplingParams
from neural.spec_decode import SpeculativeConfig
from neural.spec_decode.rejection_sampler import greedy_verify, rejection_sample

# chi-square 0.999 quantiles (alpha = 0.001: a correct sampler fails 1 run in 1000). Values from tables,
# checked against scipy.stats.chi2.ppf(0.999, df) when scipy is importable (test below).
CHI2_999 = {3: 16.266, 5: 20.515, 15: 37.697}


def chi_square(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def test_critical_values_match_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    for df, crit in CHI2_999.items():
        assert scipy_stats.chi2.ppf(0.999, df) == pytest.approx(crit, abs=1e-3)


def test_greedy_verify_accepts_the_matching_prefix():
    assert greedy_verify([5, 6, 7, 8], [5, 6, 9]) == (2, 7)
    assert greedy_verify([5, 6, 7, 8], [5, 6, 7]) == (3, 8)  # all kept: bonus token
    assert greedy_verify([4, 6], [5]) == (0, 4)
    assert greedy_verify([4], []) == (0, 4)


def test_rejects_bad_shapes():
    with pytest.raises(ValueError, match="k \\+ 1"):
        rejection_sample(torch.full((2, 4), 0.25), [1, 2])
    with pytest.raises(ValueError, match="draft_probs"):
        rejection_sample(torch.full((3, 4), 0.25), [1, 2], torch.full((1, 4), 0.25))


P = torch.tensor([0.5, 0.25, 0.15, 0.07, 0.02, 0.01], dtype=torch.float64)
Q = torch.tensor([0.05, 0.1, 0.2, 0.3, 0.25, 0.1], dtype=torch.float64)


@pytest.mark.parametrize("mode", ["point_mass_likely", "point_mass_unlikely", "draft_distribution"])
def test_first_token_follows_target(mode):
    gen = torch.Generator().manual_seed(1)
    n = 20000
    counts = torch.zeros(6, dtype=torch.float64)
    target = torch.stack([P, P])
    for _ in range(n):
        if mode == "draft_distribution":
            d = int(torch.multinomial(Q, 1, generator=gen))
            a, nxt = rejection_sample(target, [d], Q.unsqueeze(0), gen)
        else:
            d = 0 if mode == "point_mass_likely" else 4
            a, nxt = rejection_sample(target, [d], None, gen)
        counts[d if a == 1 else nxt] += 1
    assert chi_square(counts, P) < CHI2_999[5]


def test_naive_acceptance_is_detected():
    """Control: keeping every draft token (no rejection) gives the draft's distribution, and the same
    statistic flags it — so the tests above can fail."""
    gen = torch.Generator().manual_seed(2)
    counts = torch.bincount(torch.multinomial(Q, 20000, replacement=True, generator=gen), minlength=6).double()
    assert chi_square(counts, P) > 100 * CHI2_999[5]


def test_two_token_joint_on_toy_markov_model():
    """Vocabulary of 4; target p(x1), p(x2|x1); a different draft q proposes 2 tokens. Generating two
    tokens — a verify step, then plain target sampling if fewer than two came out — must give the
    target's joint p(x1) p(x2|x1) over the 16 cells."""
    gen = torch.Generator().manual_seed(3)
    p1 = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64)
    p2 = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25], [0.05, 0.05, 0.1, 0.8]],
                      dtype=torch.float64)
    q1 = torch.tensor([0.1, 0.1, 0.4, 0.4], dtype=torch.float64)
    q2 = torch.tensor([[0.4, 0.3, 0.2, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7], [0.25, 0.25, 0.25, 0.25]],
                      dtype=torch.float64)
    counts = torch.zeros(4, 4, dtype=torch.float64)
    for _ in range(20000):
        d1 = int(torch.multinomial(q1, 1, generator=gen))
        d2 = int(torch.multinomial(q2[d1], 1, generator=gen))
        target = torch.stack([p1, p2[d1], p2[d2]])  # the last row (bonus) is never needed for 2 tokens
        a, nxt = rejection_sample(target, [d1, d2], torch.stack([q1, q2[d1]]), gen)
        out = [d1, d2][:a] + [nxt]
        if len(out) < 2:
            out.append(int(torch.multinomial(p2[out[0]], 1, generator=gen)))
        counts[out[0], out[1]] += 1
    joint = p1.unsqueeze(1) * p2
    assert chi_square(counts.flatten(), joint.flatten()) < CHI2_999[15]


class ConstantProposer:
    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens

    def propose(self, seqs, ks):
        return [self.tokens[:k] for k in ks]

    def on_verified(self, seq, num_accepted):
        pass

    def release(self, seq):
        pass


def test_engine_sampling_matches_target_distribution(tmp_path):
    """End to end: temperature 1, top_k 4 (a 4-token vocabulary per position). Token 1 comes from the
    prefill, token 2 from a verify step scoring constant proposals; the joint over the 16 (x1, x2)
    cells must match the target computed by a plain forward of the same model."""
    folder = make_tiny_model(tmp_path / "m", "llama", initializer_range=0.3)
    prompt = [1, 17, 33, 60]
    # max_tokens 3: with one token left there is nothing to speculate, so token 2 is a verify step's
    sp = SamplingParams(max_tokens=3, temperature=1.0, top_k=4, ignore_eos=True)
    plain = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 21))
    seen: list[torch.Tensor] = []
    rec = SamplingParams(max_tokens=1, ignore_eos=True, logits_processors=[lambda ids, lg: seen.append(lg.clone()) or lg])

    def top4(prefix: list[int]) -> tuple[list[int], torch.Tensor]:
        seen.clear()
        plain.generate(prefix, rec)
        vals, idx = seen[0].double().topk(4)
        return idx.tolist(), vals.softmax(-1)

    x1s, p1 = top4(prompt)
    cells, probs = [], []
    for x1, px1 in zip(x1s, p1.tolist()):
        x2s, p2 = top4(prompt + [x1])
        for x2, px2 in zip(x2s, p2.tolist()):
            cells.append((x1, x2))
            probs.append(px1 * px2)
    # propose the second token that is likeliest overall, so both acceptance and rejection happen
    best = max(set(c[1] for c in cells), key=lambda t: sum(p for c, p in zip(cells, probs) if c[1] == t))
    spec = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 21, max_num_seqs=128,
                               speculative=SpeculativeConfig(num_speculative_tokens=2, adaptive=False)))
    spec.speculator.proposer = ConstantProposer([best, best])
    n = 2000
    outs = spec.generate([prompt] * n, sp)
    index = {c: i for i, c in enumerate(cells)}
    counts = torch.zeros(len(cells), dtype=torch.float64)
    for o in outs:
        counts[index[tuple(o.token_ids[:2])]] += 1  # KeyError = a token outside the target's support
    m = spec.metrics()
    assert m["spec_verify_steps"] == n and 0 < m["spec_accepted_tokens"] < n  # accepted sometimes, not always
    assert chi_square(counts, torch.tensor(probs, dtype=torch.float64)) < CHI2_999[15]
    assert spec.block_manager.num_used_blocks == 0
