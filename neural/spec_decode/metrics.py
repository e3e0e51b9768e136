"""SpecDecodeMetrics: proposed / accepted token counts and the rates derived from them (per request, engine)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SpecDecodeMetrics:
    num_verify_steps: int = 0  # target forwards that scored at least one proposed token
    proposed_tokens: int = 0
    accepted_tokens: int = 0  # proposed tokens the target kept (bonus/correction tokens not counted)
    emitted_tokens: int = 0  # tokens produced by verify steps: accepted + one bonus or correction each

    def record(self, proposed: int, accepted: int, emitted: int) -> None:
        self.num_verify_steps += 1
        self.proposed_tokens += proposed
        self.accepted_tokens += accepted
        self.emitted_tokens += emitted

    @property
    def acceptance_rate(self) -> float:
        return self.accepted_tokens / self.proposed_tokens if self.proposed_tokens else 0.0

    @property
    def mean_accepted_length(self) -> float:
        """Accepted proposed tokens per verify step (tokens per verify step is this + 1)."""
        return self.accepted_tokens / self.num_verify_steps if self.num_verify_steps else 0.0

    def as_dict(self, prefix: str = "") -> dict[str, float | int]:
        return {
            f"{prefix}verify_steps": self.num_verify_steps,
            f"{prefix}proposed_tokens": self.proposed_tokens,
            f"{prefix}accepted_tokens": self.accepted_tokens,
            f"{prefix}emitted_tokens": self.emitted_tokens,
            f"{prefix}acceptance_rate": self.acceptance_rate,
            f"{prefix}mean_accepted_length": self.mean_accepted_length,
        }
