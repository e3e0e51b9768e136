"""Deterministic stand-ins for the pipeline's collaborators: a scripted generator and a fixed retriever."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from symbolic import RuleBase


class WordTokenizer:
    """One token per whitespace-separated word: token counts are easy to reason about in tests."""

    eos_token_ids = {0}

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.words: list[str] = ["<eos>"]

    def encode(self, text: str) -> list[int]:
        ids = []
        for w in text.split():
            if w not in self.vocab:
                self.vocab[w] = len(self.words)
                self.words.append(w)
            ids.append(self.vocab[w])
        return ids

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.words[i] for i in ids)

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        text = "".join(f"<{m['role']}> {m['content']}\n" for m in messages)
        return text + ("<assistant>" if add_generation_prompt else "")


@dataclass
class FakeOutput:
    text: str
    token_ids: list[int]
    prompt_token_ids: list[int]
    delta_text: str = ""
    finished: bool = True
    finish_reason: str | None = "stop"
    metrics: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(ttft_s=0.01, e2e_s=0.03, prompt_tokens=None))


class ScriptedGenerator:
    """Answers with the next scripted text on every call, recording the messages it was given."""

    def __init__(self, answers: list[str], max_model_len: int = 4096):
        self.answers = list(answers)
        self.calls: list[list[dict]] = []
        self.sampling: list = []
        self.tokenizer = WordTokenizer()
        self.max_model_len = max_model_len

    def _next(self, prompt: str, sampling) -> FakeOutput:
        if not self.answers:
            raise AssertionError("the generator was called more times than scripted")
        self.sampling.append(sampling)
        text = self.answers.pop(0)
        return FakeOutput(text, self.tokenizer.encode(text), self.tokenizer.encode(prompt))

    def chat(self, messages: list[dict], sampling=None) -> FakeOutput:
        self.calls.append(messages)
        return self._next(self.tokenizer.apply_chat_template(messages), sampling)

    def stream(self, prompt: str | list[dict], sampling=None) -> Iterator[FakeOutput]:
        if isinstance(prompt, list):  # a chat, as the answer loop streams it
            self.calls.append(prompt)
            prompt = self.tokenizer.apply_chat_template(prompt)
        else:
            self.calls.append([{"role": "raw", "content": prompt}])
        out = self._next(prompt, sampling)
        words = out.text.split(" ")
        for i in range(len(words)):
            delta = (" " if i else "") + words[i]
            yield FakeOutput(" ".join(words[: i + 1]), out.token_ids[: i + 1], out.prompt_token_ids, delta,
                             i == len(words) - 1, "stop" if i == len(words) - 1 else None)


@dataclass
class FakePassage:
    doc_id: str
    text: str
    score: float = 1.0
    start: int = 0
    end: int = 0
    chunk_id: str = "c0"
    superseded: bool = False
    superseded_by: str | None = None
    context_prefix: str | None = None
    authority: str | None = None
    quarantine: str | None = None
    effective_date: str | None = None
    heading_path: list[str] | None = None
    subject: str | None = None

    def __post_init__(self) -> None:
        self.end = self.end or self.start + len(self.text)


class FixedRetriever:
    """Returns its passages, best first, for every query; they are also the whole KB (``passages()``).
    Quarantined ones come back only when asked for, as from retrieval.Retriever."""

    version = "fixed"

    def __init__(self, passages: list[FakePassage]):
        self.kb = list(passages)
        self.queries: list[tuple[str, int]] = []

    def search(self, query: str, top_k: int = 5, include_quarantined: bool = False, **_: object) -> list[FakePassage]:
        self.queries.append((query, top_k))
        return [p for p in self.kb if include_quarantined or not p.quarantine][:top_k]

    def passages(self, *, include_quarantined: bool = False) -> list[FakePassage]:
        return [p for p in self.kb if include_quarantined or not p.quarantine]

    def __len__(self) -> int:
        return len(self.kb)


_ENGINE = None


def default_engine():
    """The default SmolLM2 engine, loaded once per test process (loading costs seconds)."""
    global _ENGINE
    if _ENGINE is None:
        from neural import Engine, EngineConfig
        _ENGINE = Engine(EngineConfig(max_model_len=2048, kv_cache_bytes=96 << 20))
    return _ENGINE


class ScriptedThenModel:
    """Gives the scripted answers first, then lets the real engine answer (a perturbed first attempt
    through otherwise real components)."""

    def __init__(self, engine, scripted: list[str]):
        self.engine, self.scripted = engine, list(scripted)
        self.tokenizer = engine.tokenizer
        self.max_model_len = engine.max_model_len
        self.calls: list[list[dict]] = []

    def chat(self, messages: list[dict], sampling=None):
        self.calls.append(messages)
        if self.scripted:
            text = self.scripted.pop(0)
            return FakeOutput(text, self.tokenizer.encode(text), [])
        return self.engine.chat(messages, sampling)

    def stream(self, prompt: str, sampling=None):
        raise NotImplementedError("not used by these tests")


def answer_gap_for(rulebase, question: str, answer: str, passages: list) -> str | None:
    """pipeline.checks.answer_check.answer_gap as the answer loop calls it, for ``answer`` over ``passages``."""
    from pipeline.checks.answer_check import answer_gap
    from pipeline.readers.patterns import extract_claims
    from pipeline.evidence.passage_facts import extract_evidence
    from pipeline.question.focus import parse_question

    _facts, values = extract_evidence(passages, rulebase)
    claims, mentions = extract_claims(answer, passages, rulebase)
    return answer_gap(answer, parse_question(question, rulebase), claims, mentions, rulebase, None, values)


def facts_read(reader, rulebase, question: str, answer: str) -> list[str]:
    """The facts a claim reader (value_claims, label_claims, band_claims: answer, its value mentions, the
    question's focus, the rule base) reads from ``answer`` to ``question``, as text."""
    from pipeline.readers.patterns import extract_claims
    from pipeline.question.focus import parse_question

    _claims, mentions = extract_claims(answer, [], rulebase)
    return [str(c.fact) for c, _read in reader(answer, mentions, parse_question(question, rulebase), rulebase)]


def rulebase_of(text: str, folder: Path, name: str = "r.rules") -> RuleBase:
    """The rule base of one rule file with ``text``, written as ``folder/name`` (error positions name it)."""
    from symbolic import load_rulebase

    (folder / name).write_text(text, encoding="utf-8")
    return load_rulebase(folder)
