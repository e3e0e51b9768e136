"""One generation of the answer loop: sampling from the request's options, token events while streaming, and
the text with its timings (prefill, decode) and token usage."""
from __future__ import annotations

import time
from typing import Any, Generator

from pipeline import seams
from pipeline.events import Generation, TokenEvent
from pipeline.generate import prompts
from pipeline.generate.citation_guard import CitationOnlyGuard
from pipeline.types import AskOptions


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def generate(generator: seams.Generator, prompt: prompts.Prompt, opts: AskOptions, attempt: int, stream: bool,
             repetition_penalty: float, stop: tuple[str, ...]) -> Generator[TokenEvent, None, Generation]:
    """Run one generation (yielding token events when streaming); returns text, timings, usage."""
    from neural import SamplingParams
    seed = None if opts.seed is None else opts.seed + attempt
    local = getattr(generator, "supports_logits_processors", True) and getattr(generator, "tokenizer", None) is not None
    guard: list[Any] = [CitationOnlyGuard(generator.tokenizer)] if local else []
    sampling = SamplingParams(max_tokens=opts.max_tokens, temperature=opts.temperature, seed=seed,
                              repetition_penalty=repetition_penalty, stop=list(stop), logits_processors=guard)
    t0 = time.perf_counter()
    first = None
    out = None
    if stream:
        for out in generator.stream(prompt.messages, sampling):  # the chat, as chat() is given it: same ids
            if first is None:
                first = time.perf_counter()
            if out.delta_text:
                yield {"type": "token", "attempt": attempt, "text": out.delta_text}
    else:
        out = generator.chat(prompt.messages, sampling)
    end = time.perf_counter()
    metrics = getattr(out, "metrics", None)
    ttft = getattr(metrics, "ttft_s", None)
    if ttft is None:
        ttft = (first or end) - t0
    e2e = getattr(metrics, "e2e_s", None) or (end - t0)
    prompt_tokens = getattr(metrics, "prompt_tokens", None) or len(getattr(out, "prompt_token_ids", []) or [])
    # a remote generator has no token ids, only the server's count
    completion_tokens = getattr(metrics, "generated_tokens", None) or len(getattr(out, "token_ids", []) or [])
    return {"text": out.text if out is not None else "", "prefill_ms": ms(ttft),
            "decode_ms": ms(max(0.0, e2e - ttft)), "finish_reason": getattr(out, "finish_reason", None),
            "usage": {"prompt_tokens": int(prompt_tokens or prompt.prompt_tokens),
                      "completion_tokens": int(completion_tokens)}}
