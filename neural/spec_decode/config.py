"""SpeculativeConfig: which proposer speculates, how many tokens, and when a request stops speculating."""
from __future__ import annotations

from dataclasses import dataclass

from neural.errors import EngineError

METHODS = ("ngram", "draft")


@dataclass
class SpeculativeConfig:
    method: str = "ngram"  # ngram = prompt lookup | draft = a smaller model (default: the target's first layers)
    # most tokens proposed per step (the adaptive length never exceeds it). 4: on the CPU a verify step of
    # up to 5 rows costs about one decode step (weights are read once either way); past ~6 rows the GEMMs
    # grow with the rows, and the default model rarely keeps more than 4 proposed tokens
    num_speculative_tokens: int = 4
    # prompt lookup: the longest suffix n-gram with prompt_lookup_min <= n <= prompt_lookup_max is matched.
    # min 1: a cheap verify makes even a one-token match worth proposing (fewer plain decode steps)
    prompt_lookup_min: int = 1
    prompt_lookup_max: int = 5
    # adaptation per request: grow the proposal length while everything is accepted, shrink it to the
    # accepted length + 1 on a rejection; when the acceptance rate over the last ``window`` verifications
    # falls below ``min_acceptance_rate`` speculation pauses for ``cooldown_steps`` decode steps (doubling
    # each time it pauses again), because a rejected proposal costs verification work for nothing
    # Defaults measured on the 2-core CPU (bench/RESULTS.md): a verify step costs about one decode step, so
    # only a request whose proposals are almost never kept (< 5 % over 8 verifications) pauses; pausing at
    # 25 % over 4 cost RAG answers more copied spans than it saved on prompts with nothing to copy
    adaptive: bool = True
    window: int = 8
    min_acceptance_rate: float = 0.05
    cooldown_steps: int = 16
    max_cooldown_steps: int = 512
    # draft model: a path (HF folder / .gguf, same tokenizer) or None = self-speculation with the
    # target's first ``draft_num_layers`` layers (sharing their weights) and its own paged KV cache
    draft_model: str | None = None
    draft_num_layers: int | None = None
    draft_kv_cache_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise EngineError(f"speculative.method must be one of {METHODS}, got {self.method!r}")
        for name in ("num_speculative_tokens", "prompt_lookup_min", "prompt_lookup_max", "window",
                     "cooldown_steps", "max_cooldown_steps", "draft_kv_cache_bytes"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise EngineError(f"speculative.{name} must be a positive integer, got {v!r}")
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise EngineError(
                f"speculative.prompt_lookup_min ({self.prompt_lookup_min}) exceeds "
                f"prompt_lookup_max ({self.prompt_lookup_max})"
            )
        if not 0.0 <= self.min_acceptance_rate <= 1.0:
            raise EngineError(f"speculative.min_acceptance_rate must be in [0, 1], got {self.min_acceptance_rate}")
        if self.draft_num_layers is not None and (
            not isinstance(self.draft_num_layers, int) or self.draft_num_layers < 1
        ):
            raise EngineError(f"speculative.draft_num_layers must be a positive integer, got {self.draft_num_layers!r}")
