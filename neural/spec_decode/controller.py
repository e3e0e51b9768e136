"""ProposalController: per-request proposal length, adapted to recent acceptance, and the on/off switch."""
from __future__ import annotations

from collections import deque

from neural.spec_decode.config import SpeculativeConfig


class ProposalController:
    """How many tokens to propose for one request next step (0 = decode normally this step)."""

    def __init__(self, cfg: SpeculativeConfig) -> None:
        self.cfg = cfg
        self.k = cfg.num_speculative_tokens if not cfg.adaptive else min(4, cfg.num_speculative_tokens)
        self.history: deque[tuple[int, int]] = deque(maxlen=cfg.window)  # (proposed, accepted) per verify
        self.paused_steps = 0  # decode steps left before speculation is tried again
        self.next_cooldown = cfg.cooldown_steps
        self.num_pauses = 0

    def num_to_propose(self) -> int:
        if self.paused_steps > 0:
            self.paused_steps -= 1
            return 0
        return self.k

    def record(self, proposed: int, accepted: int) -> None:
        if not self.cfg.adaptive or proposed == 0:
            return
        k_max = self.cfg.num_speculative_tokens
        # all kept: the copied span probably goes on, so reach further; else stop just past what was kept
        self.k = min(k_max, 2 * self.k) if accepted == proposed else max(1, min(k_max, accepted + 1))
        self.history.append((proposed, accepted))
        if len(self.history) == self.history.maxlen:
            rate = sum(a for _, a in self.history) / sum(p for p, _ in self.history)
            if rate < self.cfg.min_acceptance_rate:
                # not paying: every rejected token was verified for nothing. Pause, back off exponentially
                self.paused_steps = self.next_cooldown
                self.next_cooldown = min(2 * self.next_cooldown, self.cfg.max_cooldown_steps)
                self.num_pauses += 1
                self.history.clear()
                self.k = 1

    @property
    def paused(self) -> bool:
        return self.paused_steps > 0
