"""SamplingParams: how one request picks its tokens and when it stops (validated on construction)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch

from neural.errors import InvalidSamplingError

LogitsProcessor = Callable[[list[int], torch.Tensor], torch.Tensor]


@dataclass
class SamplingParams:
    max_tokens: int = 256
    temperature: float = 0.0  # 0 = greedy
    top_k: int = 0  # 0 = off
    top_p: float = 1.0
    min_p: float = 0.0
    repetition_penalty: float = 1.0  # HF/CTRL semantics over prompt + generated tokens
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    logprobs: bool = False
    # each gets (generated token ids so far, logits [vocab] float32) and returns logits. One that defines
    # active(generated ids) -> bool promises, when it returns False, to leave the logits unchanged for those
    # ids and every continuation of them: speculative decoding, off while any processor is active, resumes.
    logits_processors: list[LogitsProcessor] = field(default_factory=list)
    speculative: bool = True  # False: opt out of speculative decoding when the engine speculates

    def __post_init__(self) -> None:
        def bad(msg: str) -> InvalidSamplingError:
            return InvalidSamplingError(f"invalid SamplingParams: {msg}")

        if isinstance(self.stop, str):
            self.stop = [self.stop]
        if not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool) or self.max_tokens < 1:
            raise bad(f"max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        for name in ("temperature", "top_p", "min_p", "repetition_penalty"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise bad(f"{name} must be a finite number, got {v!r}")
        if self.temperature < 0:
            raise bad(f"temperature must be >= 0 (0 = greedy), got {self.temperature}")
        if not isinstance(self.top_k, int) or isinstance(self.top_k, bool) or self.top_k < 0:
            raise bad(f"top_k must be an integer >= 0 (0 = off), got {self.top_k!r}")
        if not 0.0 < self.top_p <= 1.0:
            raise bad(f"top_p must be in (0, 1], got {self.top_p}")
        if not 0.0 <= self.min_p <= 1.0:
            raise bad(f"min_p must be in [0, 1], got {self.min_p}")
        if self.repetition_penalty <= 0:
            raise bad(f"repetition_penalty must be > 0, got {self.repetition_penalty}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise bad(f"seed must be an integer or None, got {self.seed!r}")
        if not all(isinstance(s, str) and s for s in self.stop):
            raise bad(f"stop must be a list of non-empty strings, got {self.stop!r}")
        if not all(isinstance(t, int) and t >= 0 for t in self.stop_token_ids):
            raise bad(f"stop_token_ids must be non-negative integers, got {self.stop_token_ids!r}")
        if not isinstance(self.speculative, bool):
            raise bad(f"speculative must be a bool, got {self.speculative!r}")
        if not all(callable(p) for p in self.logits_processors):
            raise bad("logits_processors must be callables (token_ids, logits) -> logits")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    @property
    def needs_logits_work(self) -> bool:
        """True when this request cannot take the batched plain-argmax fast path."""
        return (
            not self.greedy
            or self.repetition_penalty != 1.0
            or bool(self.logits_processors)
            or self.logprobs
        )
