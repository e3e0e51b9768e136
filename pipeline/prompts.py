"""Grounded prompts: numbered sources [n], answer-only-from-sources instructions, fitted to the context."""
from __future__ import annotations

import dataclasses
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

# DESIGN §4's form (the one a 0.5B model answered 5/5 with), plus the citation and abstention asks.
CONTEXT_INSTRUCTION = ("Answer in one sentence using only the context, and cite the source number like [1]. "
                       "If the context does not contain the answer, reply exactly: " + ABSTAIN_SENTINEL)
PROMPT_FORMS = ("sources", "context")

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


def user_message(question: str, sources: Sequence[str], form: str = "sources", question_first: bool = False) -> str:
    """``form`` "sources": "Sources: … Question: … <INSTRUCTION>"; "context": DESIGN §4's "Context: …
    Question: … Answer in one sentence using only the context." ``question_first`` puts the question
    above the sources (the instruction stays last, nearest the answer)."""
    if form not in PROMPT_FORMS:
        raise ValueError(f"prompt form must be one of {', '.join(PROMPT_FORMS)}; got {form!r}")
    label, instruction = ("Sources", INSTRUCTION) if form == "sources" else ("Context", CONTEXT_INSTRUCTION)
    body = f"{label}:\n" + "\n".join(sources)
    if question_first:
        return f"Question: {question}\n\n{body}\n\n{instruction}"
    return f"{body}\n\nQuestion: {question}\n{instruction}"


# Segments of a passage: a sentence (. ! ? 。！？) or a line (markdown table rows, list items).
_SEGMENT_RE = re.compile(r"(?:[^\n.!?。！？]|[.!?](?!\s|$))*(?:[.!?]+(?=\s|$)|[。！？]+|\n|$)")
_WORD_RE = re.compile(r"[a-z0-9]+(?:[-./][a-z0-9]+)*")
_STOPWORDS = frozenset("a an the of to in on for and or is are was be by with what how much many does do "
                       "which who when where why can must at as it its this that from under per any".split())


def _terms(text: str) -> set[str]:
    """Content words (English) and character bigrams (Chinese) of ``text``, for overlap scoring."""
    t = text.lower()
    words = {w for w in _WORD_RE.findall(t) if w not in _STOPWORDS}
    han = re.findall(r"[\u3400-\u9fff]+", t)
    return words | {run[i:i + 2] for run in han for i in range(max(1, len(run) - 1))}


def segments(text: str) -> list[tuple[int, int]]:
    """Non-empty sentence/line spans of ``text`` (whitespace trimmed), in order."""
    out = []
    for m in _SEGMENT_RE.finditer(text):
        s, e = m.span()
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s and (not out or s >= out[-1][1]):
            out.append((s, e))
    return out


def focus_passage(passage: Any, question: str, max_segments: int) -> Any:
    """The passage cut to the ``max_segments`` consecutive sentences/lines sharing the most terms with
    the question, rarer terms weighing more (earliest window on ties). The cut is contiguous, so the copy's ``start``/``end`` stay
    an exact span of the document: ``text == document[start:end]`` still holds. Passages already
    short enough, or with no overlap at all, come back unchanged."""
    if max_segments < 1:
        raise ValueError(f"max_segments must be at least 1; got {max_segments}")
    segs = segments(passage.text)
    if len(segs) <= max_segments:
        return passage
    q = _terms(question)
    shared = [q & _terms(passage.text[s:e]) for s, e in segs]
    # A question term found in many segments (the product name repeated down a datasheet) says little
    # about which segment answers: weight each term by 1 / the number of segments that contain it.
    df = {t: sum(t in sh for sh in shared) for t in q}
    scores = [sum(1.0 / df[t] for t in sh) for sh in shared]
    best = max(range(len(segs) - max_segments + 1), key=lambda i: (sum(scores[i:i + max_segments]), -i))
    if sum(scores[best:best + max_segments]) == 0:
        return passage
    s, e = segs[best][0], segs[best + max_segments - 1][1]
    return dataclasses.replace(passage, text=passage.text[s:e], start=passage.start + s,
                               end=passage.start + e)


def build(question: str, passages: Sequence[Any], tokenizer: _Tokenizer, *, context_len: int,
          max_tokens: int, followup: Sequence[dict] = (), form: str = "sources",
          question_first: bool = False) -> Prompt:
    """The chat prompt for ``question`` with ``passages`` as numbered sources, fitted so that prompt +
    ``max_tokens`` fit ``context_len`` tokens: lowest-score passages are dropped first, then the last
    kept passage is trimmed. ``followup`` (e.g. a previous answer and feedback) is appended as is."""
    budget = context_len - max_tokens
    ranked = sorted(passages, key=lambda p: -float(getattr(p, "score", 0.0)))
    kept, dropped = list(ranked), []

    def render(items: list[Any], last_text: str | None = None) -> tuple[list[dict], str, int]:
        sources = [format_source(i + 1, p, last_text if (last_text is not None and i == len(items) - 1) else None)
                   for i, p in enumerate(items)]
        messages = [{"role": "user", "content": user_message(question, sources, form, question_first)}, *followup]
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
