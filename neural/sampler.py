"""Sampler: logits -> next token per sequence (greedy fast path; penalties, processors, top-k/p, min-p, seeds)."""
from __future__ import annotations

import torch

from neural.sequence import Sequence


def apply_repetition_penalty(logits: torch.Tensor, token_ids: list[int], penalty: float) -> torch.Tensor:
    """HF/CTRL semantics: seen tokens' positive logits divided by the penalty, negative ones multiplied."""
    idx = torch.tensor(sorted(set(token_ids)), dtype=torch.long, device=logits.device)
    seen = logits.index_select(0, idx)
    logits.index_copy_(0, idx, torch.where(seen > 0, seen / penalty, seen * penalty))
    return logits


def filter_logits(logits: torch.Tensor, top_k: int, top_p: float, min_p: float) -> torch.Tensor:
    """Masks (to -inf) tokens outside top-k, the top-p nucleus, or below min_p x max probability."""
    if top_k > 0 and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if min_p > 0.0:
        probs = logits.softmax(-1)
        logits = logits.masked_fill(probs < min_p * probs.max(), float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=True)
        cum = sorted_logits.softmax(-1).cumsum(-1)
        # drop a token when the mass *before* it already reaches top_p (the top token always stays)
        drop_sorted = (cum - sorted_logits.softmax(-1)) >= top_p
        drop = torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def sample_one(logits: torch.Tensor, seq: Sequence, default_gen: torch.Generator | None) -> tuple[int, float | None]:
    """``logits`` [vocab] float32 for one sequence; returns (token id, its logprob if asked)."""
    sp = seq.sampling
    if sp.repetition_penalty != 1.0:
        logits = apply_repetition_penalty(logits.clone(), seq.token_ids, sp.repetition_penalty)
    for proc in sp.logits_processors:
        logits = proc(seq.generated_ids, logits)
    if sp.greedy:
        token = int(torch.argmax(logits))
        logprob = float(torch.log_softmax(logits, -1)[token]) if sp.logprobs else None
        return token, logprob
    logits = filter_logits(logits / sp.temperature, sp.top_k, sp.top_p, sp.min_p)
    probs = logits.softmax(-1)
    gen = seq.generator if seq.generator is not None else default_gen
    token = int(torch.multinomial(probs, 1, generator=gen))
    logprob = float(torch.log(probs[token])) if sp.logprobs else None
    return token, logprob


class Sampler:
    def __init__(self) -> None:
        self.generator = torch.Generator()  # unseeded requests share one stream
        self.generator.seed()

    @torch.inference_mode()
    def __call__(self, logits: torch.Tensor, seqs: list[Sequence]) -> tuple[list[int], list[float | None]]:
        logits = logits.cpu()
        plain = [i for i, s in enumerate(seqs) if not s.sampling.needs_logits_work]
        tokens: list[int] = [0] * len(seqs)
        logprobs: list[float | None] = [None] * len(seqs)
        if plain:
            # one argmax and one host transfer for every greedy request: no per-token .item() storm
            rows = logits if len(plain) == len(seqs) else logits[plain]
            for i, t in zip(plain, rows.argmax(-1).tolist()):
                tokens[i] = t
        if len(plain) < len(seqs):
            plain_set = set(plain)
            for i, seq in enumerate(seqs):
                if i not in plain_set:
                    tokens[i], logprobs[i] = sample_one(logits[i], seq, self.generator)
        return tokens, logprobs
