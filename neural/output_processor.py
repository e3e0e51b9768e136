"""Per-token bookkeeping after sampling: stop conditions, incremental text, stop strings, metrics."""
from __future__ import annotations

import time

from neural.sequence import RequestOutput, Sequence


def check_stop(seq: Sequence, eos_ids: set[int], max_model_len: int) -> str | None:
    """Token-level stop reasons for the token just appended (stop strings are checked on text)."""
    sp, last = seq.sampling, seq.token_ids[-1]
    if not sp.ignore_eos and last in eos_ids:
        return "stop"
    if last in sp.stop_token_ids:
        return "stop"
    if seq.num_generated >= sp.max_tokens or len(seq.token_ids) >= max_model_len:
        return "length"
    return None


def _held_back(text: str, stops: list[str]) -> int:
    """Length of the text's tail that could still grow into a stop string (not streamed yet)."""
    best = 0
    for s in stops:
        for k in range(min(len(s) - 1, len(text)), best, -1):
            if text.endswith(s[:k]):
                best = k
                break
    return best


def update_text(seq: Sequence, tokenizer, finished: bool) -> bool:
    """Re-detokenize the generated ids; truncate at a stop string. Returns True if a stop string hit."""
    text = tokenizer.decode(seq.generated_ids)
    hit = False
    stops = seq.sampling.stop
    if stops:
        # a new token can only complete a stop string that ends in the new tail
        window = max(0, len(seq.text) - max(len(s) for s in stops))
        cut = min((i for i in (text.find(s, window) for s in stops) if i >= 0), default=-1)
        if cut >= 0:
            text, hit = text[:cut], True
    seq.text = text
    return hit


def make_output(seq: Sequence, finished: bool) -> RequestOutput:
    text = seq.text
    if finished and seq.finish_reason == "length":
        # the token budget ended inside a character: its missing bytes never come ("…10 天法定\ufffd")
        text = text.rstrip("\ufffd")
    visible = len(text)
    if not finished:
        # hold back an incomplete UTF-8 character and a possible stop-string prefix
        while visible > seq.sent_text_len and text[visible - 1] == "\ufffd":
            visible -= 1
        if seq.sampling.stop:
            visible = max(seq.sent_text_len, visible - _held_back(text[:visible], seq.sampling.stop))
    delta = text[seq.sent_text_len : visible]
    seq.sent_text_len = max(seq.sent_text_len, visible)
    if finished:
        now = time.perf_counter()
        m = seq.metrics
        m.e2e_s = now - seq.arrival_time
        if seq.first_token_time is not None and seq.num_generated > 1:
            m.tpot_s = (now - seq.first_token_time) / (seq.num_generated - 1)
    return RequestOutput(
        request_id=seq.request_id,
        prompt=seq.prompt,
        prompt_token_ids=seq.token_ids[: seq.num_prompt_tokens],
        text=text if finished else text[:visible],
        token_ids=seq.generated_ids,
        delta_text=delta,
        finished=finished,
        finish_reason=seq.finish_reason,
        logprobs=list(seq.logprobs) if seq.logprobs is not None else None,
        metrics=seq.metrics,
    )
