"""Verification of proposed tokens against the target: greedy prefix match and speculative rejection sampling.

Rejection sampling (Leviathan et al. 2023; Chen et al. 2023): proposal ``d_j`` drawn from the draft
distribution ``q_j`` is kept with probability ``min(1, p_j(d_j) / q_j(d_j))``; at the first rejection the
token is resampled from ``norm(max(p_j - q_j, 0))``; if all are kept a bonus token comes from ``p_k``.
Every emitted token is then distributed exactly as the target's ``p``. A deterministic proposer (prompt
lookup, greedy draft) is the point mass ``q_j = onehot(d_j)``: keep with probability ``p_j(d_j)``, else
resample from ``p_j`` with ``d_j`` removed.
"""
from __future__ import annotations

import torch


def greedy_verify(target_argmax: list[int], draft_tokens: list[int]) -> tuple[int, int]:
    """``target_argmax`` has k+1 entries (one per scored position). Returns (num accepted, next token)."""
    a = 0
    while a < len(draft_tokens) and draft_tokens[a] == target_argmax[a]:
        a += 1
    return a, target_argmax[a]


def rejection_sample(
    target_probs: torch.Tensor,
    draft_tokens: list[int],
    draft_probs: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> tuple[int, int]:
    """``target_probs`` [k+1, V], ``draft_probs`` [k, V] or None (point mass on each draft token).

    Returns (number of draft tokens accepted, the token that follows them: a correction or the bonus).
    """
    k = len(draft_tokens)
    if target_probs.shape[0] != k + 1:
        raise ValueError(f"target_probs has {target_probs.shape[0]} rows for {k} draft tokens (need k + 1)")
    if draft_probs is not None and draft_probs.shape[0] != k:
        raise ValueError(f"draft_probs has {draft_probs.shape[0]} rows for {k} draft tokens")
    u = torch.rand(k, generator=generator, dtype=torch.float64).tolist() if k else []
    for j, d in enumerate(draft_tokens):
        p = float(target_probs[j, d])
        q = float(draft_probs[j, d]) if draft_probs is not None else 1.0
        if q > 0.0 and u[j] < min(1.0, p / q):
            continue
        if draft_probs is not None:
            residual = (target_probs[j] - draft_probs[j]).clamp_min(0.0)
        else:
            residual = target_probs[j].clone()
            residual[d] = 0.0
        if float(residual.sum()) <= 0.0:  # p == q up to rounding: the rejection had probability ~0
            residual = target_probs[j]
        return j, int(torch.multinomial(residual, 1, generator=generator))
    return k, int(torch.multinomial(target_probs[k], 1, generator=generator))
