"""Proposer: what the Speculator asks of a drafter (prompt lookup, a draft model)."""
from __future__ import annotations

from typing import Protocol

from neural.sequence import Sequence


class Proposer(Protocol):
    def propose(self, seqs: list[Sequence], ks: list[int]) -> list[list[int]]:
        """Up to ``ks[i]`` draft tokens continuing each ``seqs[i]`` (fewer, or none, when it has no guess)."""
        ...

    def on_verified(self, seq: Sequence, num_accepted: int) -> None:
        """The target accepted the first ``num_accepted`` proposals of ``seq``: drop state past them."""
        ...

    def release(self, seq: Sequence) -> None:
        """``seq`` finished or was replaced: free what the proposer holds for it."""
        ...
