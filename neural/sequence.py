"""Sequence: one request's tokens, KV block table, progress counters, detokenization state and timings."""
from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field

import torch

from neural.sampling_params import SamplingParams


class SequenceStatus(enum.Enum):
    WAITING = enum.auto()
    RUNNING = enum.auto()
    FINISHED = enum.auto()


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


@dataclass
class RequestMetrics:
    ttft_s: float | None = None  # arrival -> first generated token
    tpot_s: float | None = None  # mean time per output token after the first
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from the prefix cache (first admission)
    generated_tokens: int = 0
    e2e_s: float | None = None
    num_preemptions: int = 0
    spec_decode: SpecDecodeMetrics | None = None  # set once the request has speculated


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    text: str  # full text so far (stop string removed)
    token_ids: list[int]  # generated ids so far
    delta_text: str  # new text since the previous output for this request
    finished: bool
    finish_reason: str | None  # "stop" | "length" | "abort" | None
    logprobs: list[float] | None
    metrics: RequestMetrics


class Sequence:
    def __init__(
        self, request_id: str, prompt: str | None, prompt_token_ids: list[int], sampling: SamplingParams
    ) -> None:
        self.request_id = request_id
        self.prompt = prompt
        self.token_ids: list[int] = list(prompt_token_ids)
        self.num_prompt_tokens = len(prompt_token_ids)
        self.sampling = sampling
        self.status = SequenceStatus.WAITING
        # tokens whose K/V are in the cache; a step computes token_ids[num_computed_tokens : +n]
        self.num_computed_tokens = 0
        self.block_table: list[int] = []
        self.num_hashed_blocks = 0  # leading full blocks registered in the prefix cache
        self.block_hashes: list[int] = []  # chained hash of each registered block
        self.finish_reason: str | None = None
        self.logprobs: list[float] | None = [] if sampling.logprobs else None
        self.generator: torch.Generator | None = None
        if sampling.seed is not None:
            self.generator = torch.Generator().manual_seed(sampling.seed)
        # detokenization / streaming state
        self.text = ""
        self.sent_text_len = 0
        self.metrics = RequestMetrics(prompt_tokens=self.num_prompt_tokens)
        self.arrival_time = time.perf_counter()
        self.first_token_time: float | None = None
        self.admitted = False
        self.num_prefix_deferrals = 0  # steps it waited for another sequence to compute its shared prefix

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def num_generated(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def generated_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_uncomputed(self) -> int:
        return len(self.token_ids) - self.num_computed_tokens

    @property
    def is_finished(self) -> bool:
        return self.status == SequenceStatus.FINISHED

    def append_token(self, token_id: int) -> None:
        self.token_ids.append(token_id)
