"""How close an engine is to a reference engine on the same text: teacher-forced top-1 agreement, perplexity,
and greedy-token agreement. Used by the int8 tests and bench/cpu_quant.py."""
from __future__ import annotations

import math

import torch

from neural.sampling_params import SamplingParams
from neural.sequence import Sequence


@torch.inference_mode()
def token_logits(engine, ids: list[int]) -> torch.Tensor:
    """float32 logits ``[len(ids), vocab]`` of one forward over ``ids`` (row i predicts token i + 1), through
    the engine's own runner and KV cache (the blocks are freed again; the prefix cache is not consulted)."""
    seq = Sequence("quality-score", None, list(ids), SamplingParams(max_tokens=1))
    bm = engine.block_manager
    if not bm.allocate(seq, len(ids)):
        raise ValueError(f"{len(ids)} tokens do not fit in the engine's KV cache")
    try:
        return engine.runner.run([seq], [len(ids)], list(range(len(ids))))
    finally:
        bm.free_seq(seq)


def perplexity(engine, ids: list[int]) -> float:
    """exp(mean negative log-likelihood) of ``ids[1:]`` given their prefixes."""
    logits = token_logits(engine, ids)[:-1]
    nll = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]), reduction="mean")
    return math.exp(float(nll))


def top1_agreement(engine, reference, ids: list[int]) -> float:
    """Share of positions where both engines' most likely next token is the same (teacher-forced: both
    read the same ``ids``, so one early difference does not derail the rest, unlike free-running greedy)."""
    a, b = token_logits(engine, ids).argmax(-1), token_logits(reference, ids).argmax(-1)
    return float((a == b).float().mean())


def greedy_agreement(outputs: list[list[int]], references: list[list[int]]) -> float:
    """Share of greedy tokens identical position by position (all of a sequence after its first difference
    usually differ: this is the strict, free-running measure the issue reports)."""
    same = total = 0
    for out, ref in zip(outputs, references):
        same += sum(x == y for x, y in zip(out, ref))
        total += len(ref)
    return same / total if total else 1.0
