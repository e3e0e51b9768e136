"""Evaluation datasets (JSON Lines): line models, kind detection by keys, validation with line numbers."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

SYSTEM_KEYS = {"gold_facts", "support", "forbidden", "kind", "gold_answer"}
DETECTOR_KEYS = {"context", "answer", "label"}


class DatasetError(ValueError):
    """A dataset file that cannot be used; the message names the file and line."""


class GoldFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: str
    relation: str = Field(min_length=1)
    object: str | int | float

    @field_validator("object")
    @classmethod
    def _object_text(cls, v: str | int | float) -> str:
        return str(v)


class SystemItem(BaseModel):
    """One question of a system run, scored against the KB's gold annotations."""
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1, max_length=4000)
    language: str = "en"
    kind: str = "answerable"
    gold_answer: str | None = None
    gold_facts: list[GoldFact] = Field(default_factory=list)
    support: list[str] = Field(default_factory=list)
    forbidden: list[str | int | float] = Field(default_factory=list)

    @field_validator("forbidden")
    @classmethod
    def _forbidden_text(cls, v: list) -> list[str]:
        return [str(x) for x in v]

    @property
    def unanswerable(self) -> bool:
        return self.kind == "unanswerable"


class DetectorItem(BaseModel):
    """One (context, question, answer) triple the verifier must judge."""
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    context: str = Field(min_length=1)
    question: str = ""
    answer: str
    label: Literal["hallucinated", "faithful"]
    language: str = "en"
    source: str | None = None
    span: list[str] | None = None


@dataclass
class Dataset:
    path: str
    kind: str                                   # "system" | "detector" | "extraction"
    items: list[SystemItem] | list[DetectorItem] | list[ExtractionItem]


def detect_kind(obj: dict) -> str | None:
    keys = set(obj)
    if DETECTOR_KEYS <= keys:
        return "detector"
    if "question" in keys and keys & SYSTEM_KEYS:
        return "system"
    return None


def _explain(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(x) for x in e["loc"]) or "line"
        parts.append(f"field '{where}': {e['msg']}")
    return "; ".join(parts)


def load_dataset(path: str | Path, mode: str = "auto") -> Dataset:
    """Read and validate every line; mode 'auto' decides the kind from the first line's keys."""
    path = Path(path)
    if mode not in ("auto", "system", "detector"):
        raise DatasetError(f"unknown mode {mode!r}; expected auto, system or detector")
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file")
    kind = None if mode == "auto" else mode
    items: list = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(obj, dict):
                raise DatasetError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            line_kind = detect_kind(obj)
            if kind is None:
                if line_kind is None:
                    raise DatasetError(
                        f"{path}:{lineno}: cannot tell the dataset kind from keys {sorted(obj)}; system "
                        f"lines have 'question' plus some of {sorted(SYSTEM_KEYS)}, detector lines have "
                        f"{sorted(DETECTOR_KEYS)}")
                kind = line_kind
            elif mode == "auto" and line_kind is not None and line_kind != kind:
                raise DatasetError(f"{path}:{lineno}: a {line_kind} line in a {kind} dataset")
            model = SystemItem if kind == "system" else DetectorItem
            try:
                item = model.model_validate(obj)
            except ValidationError as exc:
                raise DatasetError(f"{path}:{lineno}: invalid {kind} line: {_explain(exc)}") from None
            if item.id in seen:
                raise DatasetError(f"{path}:{lineno}: duplicate id {item.id!r} (first on line {seen[item.id]})")
            seen[item.id] = lineno
            items.append(item)
    if not items:
        raise DatasetError(f"{path}: the dataset is empty")
    assert kind is not None  # the first line set it
    return Dataset(str(path), kind, items)


def select(items: list, limit: int | None = None, seed: int | None = None) -> list:
    """A reproducible subset: the first `limit` items, or a seeded sample kept in file order."""
    if limit is not None and limit < 1:
        raise DatasetError(f"--limit must be at least 1, got {limit}")
    if limit is None or limit >= len(items):
        return list(items)
    if seed is None:
        return list(items[:limit])
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


class LabelledFact(BaseModel):
    """One fact an answer asserts, in the rule base's vocabulary; ``span`` is where the answer says it."""
    model_config = ConfigDict(extra="forbid")
    relation: str = Field(min_length=1)
    args: list[str]
    value: str = Field(min_length=1)
    span: str = Field(min_length=1)


class ExtractionItem(BaseModel):
    """One (question, answer) pair with every fact of the answer the rules can express (maybe none)."""
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    language: Literal["en", "zh"]
    answer: str = Field(min_length=1)
    source: Literal["gold", "model"]
    # which model wrote a ``model`` answer (``smollm2-135m``, ``qwen2.5-coder-0.5b``): reported apart, as the
    # two word their answers differently
    model: str | None = None
    facts: list[LabelledFact]
