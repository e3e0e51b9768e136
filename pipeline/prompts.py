"""Grounded prompts: numbered sources [n], answer-only-from-sources instructions, fitted to the context."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

# The exact sentence the model is told to give when the sources lack the answer; detect_abstention
# also accepts the paraphrases small models produce.
ABSTAIN_SENTINEL = "The documents do not say."

# Short and direct: a 135M model follows this better than a long system prompt (DESIGN §4).
INSTRUCTION = ("Answer the question in one or two sentences using only the sources above, and cite the "
               "source number like [1]. If the sources do not contain the answer, reply exactly: "
               + ABSTAIN_SENTINEL)

_ABSTAIN_PATTERNS = [
    re.compile(r"documents?\s+(do|does)\s+not\s+say", re.I),
    re.compile(r"(sources?|documents?|context)\s+(do|does)\s+not\s+(contain|mention|provide|specify|say)", re.I),
    re.compile(r"(文档|资料|来源)(中)?(没有|未|并未)(说明|提到|提及|包含|规定)"),
]


class _Tokenizer(Protocol):
    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: list[int]) -> str: ...
    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str: ...


@dataclass
class Prompt:
    messages: list[dict]
    text: str                         # rendered with the model's chat template
    passages: list[Any]               # the passages included, in source order: passages[n-1] is [n]
    prompt_tokens: int
    dropped: list[Any] = field(default_factory=list)   # passages that did not fit
    trimmed: bool = False


def detect_abstention(answer: str) -> bool:
    """True when the answer says the documents do not contain the answer."""
    return any(p.search(answer) for p in _ABSTAIN_PATTERNS)


def format_source(n: int, passage: Any, text: str | None = None) -> str:
    body = " ".join((passage.text if text is None else text).split())
    return f"[{n}] ({passage.doc_id}) {body}"


def user_message(question: str, sources: Sequence[str]) -> str:
    return "Sources:\n" + "\n".join(sources) + f"\n\nQuestion: {question}\n{INSTRUCTION}"


def build(question: str, passages: Sequence[Any], tokenizer: _Tokenizer, *, context_len: int,
          max_tokens: int, followup: Sequence[dict] = ()) -> Prompt:
    """The chat prompt for ``question`` with ``passages`` as numbered sources, fitted so that prompt +
    ``max_tokens`` fit ``context_len`` tokens: lowest-score passages are dropped first, then the last
    kept passage is trimmed. ``followup`` (e.g. a previous answer and feedback) is appended as is."""
    budget = context_len - max_tokens
    ranked = sorted(passages, key=lambda p: -float(getattr(p, "score", 0.0)))
    kept, dropped = list(ranked), []

    def render(items: list[Any], last_text: str | None = None) -> tuple[list[dict], str, int]:
        sources = [format_source(i + 1, p, last_text if (last_text is not None and i == len(items) - 1) else None)
                   for i, p in enumerate(items)]
        messages = [{"role": "user", "content": user_message(question, sources)}, *followup]
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        return messages, text, len(tokenizer.encode(text))

    messages, text, n = render(kept)
    while n > budget and len(kept) > 1:
        dropped.insert(0, kept.pop())
        messages, text, n = render(kept)
    trimmed = False
    if n > budget and kept:
        # One passage left and still too long: cut its text by the token overshoot (plus slack, since
        # re-encoding a cut string can merge differently).
        ids = tokenizer.encode(" ".join(kept[0].text.split()))
        keep = len(ids) - (n - budget) - 8
        while keep > 0 and n > budget:
            messages, text, n = render(kept, tokenizer.decode(ids[:keep]) + " …")
            keep -= max(8, n - budget)
        trimmed = True
    if n > budget:
        raise ValueError(f"the question alone needs {n} prompt tokens; the model allows {budget} "
                         f"(context {context_len} - max_tokens {max_tokens}): shorten the question or max_tokens")
    return Prompt(messages, text, kept, n, dropped, trimmed)
