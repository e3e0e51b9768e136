"""Grounded prompts: numbered sources [n], answer-only-from-sources instructions, fitted to the context."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from pipeline.lang import LANGUAGES, Lexicon, phrase, words
from pipeline.seams import PassageLike
from pipeline.text.script import is_chinese

# The exact sentence the model is told to give when the sources lack the answer; detect_abstention
# also accepts the paraphrases small models produce (lang/<code>/generate.toml abstain_sentinel).
ABSTAIN_SENTINEL = phrase("generate.abstain_sentinel", "en")

def _prompt_forms() -> dict[str, dict[str, tuple[str, str, str]]]:
    """form -> language -> (label, instruction, abstention hint), the forms in the order English gives them."""
    forms: dict[str, dict[str, tuple[str, str, str]]] = {}
    for code in LANGUAGES:
        for row in Lexicon.load(code).table("generate.prompt_forms"):
            hint = row["abstain_hint"] + phrase("generate.abstain_sentinel", code)
            forms.setdefault(row["id"], {})[code] = (row["label"], row["instruction"], hint)
    return forms


# Short and direct: a 135M model follows this better than a long system prompt (DESIGN §4). Each prompt form:
# (label, instruction, the abstention hint) per language (lang/<code>/generate.toml prompt_forms, the hint ending
# in that language's abstain_sentinel); "context" is DESIGN §4's form (a 0.5B model answered 5/5 with it).
# Chinese questions get the Chinese wording when the style localizes.
PROMPT_FORMS = _prompt_forms()
# The question's label in the language of the sources' label ("Question", or the Chinese one under a Chinese label)
_QUESTION_LABEL = {forms[code][0]: phrase("generate.question_label", code)
                   for forms in PROMPT_FORMS.values() for code in forms}


@dataclass(frozen=True)
class PromptStyle:
    """How the question and sources are put to the model (chosen per model: pipeline.generate.profiles)."""
    form: str = "sources"           # a key of PROMPT_FORMS
    # Offered only where it measures better: a capable model over-follows an escape hatch and abstains even
    # with the answer in its sources (DESIGN §4; bench/RESULTS.md "Prompts per model").
    abstain_hint: bool = True
    question_first: bool = False    # the question above the sources (the instruction stays last)
    doc_ids: bool = True            # "[1] (hr/leave.md) ..." rather than "[1] ..."
    localize: bool = False          # a Chinese question gets the Chinese label and instruction

    def __post_init__(self) -> None:
        if self.form not in PROMPT_FORMS:
            raise ValueError(f"prompt form must be one of {', '.join(PROMPT_FORMS)}; got {self.form!r}")

    def wording(self, question: str = "") -> tuple[str, str]:
        """(label, instruction) for ``question``."""
        lang = "zh" if self.localize and is_chinese(question) else "en"
        label, text, hint = PROMPT_FORMS[self.form][lang]
        return label, text + (hint if self.abstain_hint else "")

    @property
    def instruction(self) -> str:
        return self.wording()[1]


# An answer saying the documents do not say (lang/<code>/generate.toml abstain_patterns): English in any case,
# Chinese (which has none) as written.
_ABSTAIN_PATTERNS = [re.compile(p, re.IGNORECASE if code == "en" else 0)
                     for code in LANGUAGES for p in Lexicon.load(code).words("generate.abstain_patterns")]


class _Tokenizer(Protocol):
    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: list[int]) -> str: ...
    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str: ...


@dataclass
class Prompt:
    messages: list[dict]
    text: str                         # rendered with the model's chat template
    passages: list[PassageLike]       # the passages included, in source order: passages[n-1] is [n]
    prompt_tokens: int
    dropped: list[PassageLike] = field(default_factory=list)   # passages that did not fit
    trimmed: bool = False


def detect_abstention(answer: str) -> bool:
    """True when the answer says the documents do not contain the answer."""
    return any(p.search(answer) for p in _ABSTAIN_PATTERNS)


def _lines(text: str) -> str:
    """Whitespace collapsed within lines; line breaks kept (table rows and list items stay one per line)."""
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def format_source(n: int, passage: PassageLike, text: str | None = None, *, doc_id: bool = True) -> str:
    """``[n] (doc id)`` then the passage, led by what it depends on but does not contain (the header row
    of the table its rows belong to: ``context_prefix``)."""
    body = _lines(passage.text if text is None else text)
    prefix = getattr(passage, "context_prefix", None)
    if prefix:
        body = _lines(prefix) + "\n" + body
    return f"[{n}] ({passage.doc_id}) {body}" if doc_id else f"[{n}] {body}"


def user_message(question: str, sources: Sequence[str], style: PromptStyle = PromptStyle()) -> str:
    """"<Label>: [1] … [n] …" then "Question: …" and the style's instruction, nearest the answer."""
    label, instruction = style.wording(question)
    q = _QUESTION_LABEL.get(label, phrase("generate.question_label", "en"))
    body = f"{label}:\n" + "\n".join(sources)
    if style.question_first:
        return f"{q}: {question}\n\n{body}\n\n{instruction}"
    return f"{body}\n\n{q}: {question}\n{instruction}"


# Segments of a passage: a sentence (. ! ? 。！？) or a line (markdown table rows, list items).
_SEGMENT_RE = re.compile(r"(?:[^\n.!?。！？]|[.!?](?!\s|$))*(?:[.!?]+(?=\s|$)|[。！？]+|\n|$)")
_WORD_RE = re.compile(r"[a-z0-9]+(?:[-./][a-z0-9]+)*")
_STOPWORDS = frozenset(words("generate.stop_words"))


def question_terms(text: str) -> set[str]:
    """Content words (English) and character bigrams (Chinese) of ``text``, for overlap scoring."""
    t = text.lower()
    words = {w for w in _WORD_RE.findall(t) if w not in _STOPWORDS}
    han = re.findall(r"[\u3400-\u9fff]+", t)
    return words | {run[i:i + 2] for run in han for i in range(max(1, len(run) - 1))}


def segments(text: str) -> list[tuple[int, int]]:
    """Non-empty sentence/line spans of ``text`` (whitespace trimmed), in order."""
    out: list[tuple[int, int]] = []
    for m in _SEGMENT_RE.finditer(text):
        s, e = m.span()
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s and (not out or s >= out[-1][1]):
            out.append((s, e))
    return out


def render(question: str, passages: Sequence[PassageLike], tokenizer: _Tokenizer, followup: Sequence[dict] = (),
           style: PromptStyle = PromptStyle()) -> tuple[list[dict], str, int]:
    """(messages, templated text, token count) of the prompt with ``passages`` as sources [1], [2], …"""
    sources = [format_source(i + 1, p, doc_id=style.doc_ids) for i, p in enumerate(passages)]
    messages = [{"role": "user", "content": user_message(question, sources, style)}, *followup]
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    return messages, text, len(tokenizer.encode(text))


def build(question: str, passages: Sequence[PassageLike], tokenizer: _Tokenizer, *, context_len: int,
          max_tokens: int, followup: Sequence[dict] = (), style: PromptStyle = PromptStyle()) -> Prompt:
    """The chat prompt for ``question`` with ``passages`` (chosen and ordered by the caller, see
    pipeline.generate.sources) as numbered sources. Should prompt + ``max_tokens`` overflow ``context_len``
    (a long question or feedback), the last passages are dropped; ValueError if none of them fit."""
    budget = context_len - max_tokens
    kept = list(passages)
    dropped: list[PassageLike] = []
    messages, text, n = render(question, kept, tokenizer, followup, style)
    while n > budget and kept:
        dropped.insert(0, kept.pop())
        messages, text, n = render(question, kept, tokenizer, followup, style)
    if n > budget:
        from neural.errors import PromptTooLongError  # a ValueError the API answers as the caller's input (4xx)
        raise PromptTooLongError(f"the question alone needs {n} prompt tokens; the model allows {budget} "
                         f"(context {context_len} - max_tokens {max_tokens}): shorten the question or max_tokens")
    return Prompt(messages, text, kept, n, dropped, bool(dropped))
