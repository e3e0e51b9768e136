"""Extraction quality (verirag eval --mode extraction): relation claims read from answers vs hand-labelled facts."""
from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from pipeline.evaluation.dataset import Dataset, DatasetError, ExtractionItem
from pipeline.evaluation.metrics import by_field
from symbolic import RuleBase
from symbolic.facts import Claim
from symbolic.model import VALUE_TYPES
from symbolic.values import NUMBER_RE, Value, format_value, parse_value

# read(question, answer) -> claim dicts {"relation", "args" (all but the last), "value", "extractor", "start", "end"}
Reader = Callable[[str, str], list[dict]]
_LEADING_NUMBER = re.compile(rf"\s*({NUMBER_RE})(?![\d.,])")
_COMPOUND = re.compile(r"(\d)-(?=[A-Za-z])")     # "24-month", "52-hour"


# ---- values ------------------------------------------------------------------------------------------

def read_value(text: str, ptype: str | None = None) -> Value:
    """A value written as text, normalised. English compounds read as their value ("a 24-month warranty");
    a ``number`` may keep its counted noun ("16 characters", "33 Euro pallets"), as answers write it and
    the rule language has no unit for it."""
    for t in dict.fromkeys((text, _COMPOUND.sub(r"\1 ", text))):
        try:
            return parse_value(t)
        except ValueError:
            pass
    m = _LEADING_NUMBER.match(text) if ptype in (None, "number") else None
    if m is None:
        raise ValueError(f"cannot read a value from {text!r}")
    return parse_value(m.group(1))


def open_types(rb: RuleBase) -> set[str]:
    """Entity types with no declared entity: their names are free text, never an id to compare."""
    with_entities = {e.type for e in rb.entities.values()}
    return {t for t in rb.types if t not in with_entities}


def unscored_relations(rb: RuleBase) -> set[str]:
    """Relations no label can pin down: an argument of an open type (the holdout's ``case``) or of type
    ``text``. Their claims are recorded but neither right nor wrong."""
    free = open_types(rb) | {"text"}
    return {name for name, sig in rb.relations.items() if any(p.type in free for p in sig.params)}


def _key_part(v: object, ptype: str | None) -> object:
    """A hashable, normalised argument: values compare after parse_value (EUR 180 == 180 euros == 180欧元),
    entity ids as strings (case-insensitive)."""
    if isinstance(v, bool):
        return ("text", str(v).lower())
    if isinstance(v, (int, float)):
        return read_value(str(v))
    if isinstance(v, str):
        if ptype is not None and ptype not in VALUE_TYPES:
            return ("id", v.strip().lower())
        try:
            return read_value(v, ptype)
        except ValueError:
            return ("id", v.strip().lower())
    return v   # a symbolic value: Quantity, Money, Percentage, Date (equal after normalisation)


def fact_key(relation: str, args: list, value: object, rb: RuleBase | None = None) -> tuple:
    """What a claim and a label are compared by: relation, subject arguments and value, normalised."""
    sig = rb.relations.get(relation) if rb is not None else None
    types = [p.type for p in sig.params] if sig is not None and len(sig.params) == len(args) + 1 else None
    parts = [_key_part(a, types[i] if types else None) for i, a in enumerate(args)]
    return (relation, tuple(parts), _key_part(value, types[-1] if types else None))


def _show(v: object) -> str:
    return v if isinstance(v, str) else format_value(v)


# ---- the labelled sets -------------------------------------------------------------------------------

def label_problems(item: ExtractionItem, rb: RuleBase) -> list[str]:
    """Everything that makes a label unusable against rule base ``rb``: an undeclared or unscorable
    relation, a wrong arity, an argument that is no entity of its parameter's type, an unreadable value,
    a span the answer does not contain, the same fact twice."""
    problems: list[str] = []
    unscored = unscored_relations(rb)
    seen: set[tuple] = set()
    for n, f in enumerate(item.facts):
        where = f"fact {n} ({f.relation})"
        sig = rb.relations.get(f.relation)
        if sig is None:
            problems.append(f"{where}: relation {f.relation!r} is not declared in the rules")
            continue
        if f.relation in unscored:
            problems.append(f"{where}: relation {f.relation!r} has a free-text argument, so it is not scored")
            continue
        if len(f.args) + 1 != sig.arity:
            problems.append(f"{where}: {len(f.args)} argument(s) before the value, the relation takes {sig.arity - 1}")
            continue
        for arg, p in zip(f.args, sig.params):
            if p.type in VALUE_TYPES:      # a count, distance or period the question states ("4", "240 km")
                try:
                    read_value(str(arg), p.type)
                except ValueError:
                    problems.append(f"{where}: argument {arg!r} is no {p.type}")
                continue
            ent = rb.entities.get(arg)
            if ent is None:
                problems.append(f"{where}: {arg!r} is not an entity id")
            elif ent.type != p.type:
                problems.append(f"{where}: {arg!r} is a {ent.type}, the relation wants a {p.type}")
        last = sig.params[-1]
        if last.type in VALUE_TYPES:
            try:
                read_value(f.value, last.type)
            except ValueError as exc:
                problems.append(f"{where}: value {f.value!r} cannot be read ({exc})")
            if f.value not in f.span:
                problems.append(f"{where}: value {f.value!r} is not inside its span {f.span!r}")
        else:
            ent = rb.entities.get(f.value)
            if ent is None or ent.type != last.type:
                problems.append(f"{where}: value {f.value!r} is not an entity id of type {last.type}")
        if f.span not in item.answer:
            problems.append(f"{where}: span {f.span!r} does not occur in the answer")
        key = fact_key(f.relation, f.args, f.value, rb)
        if key in seen:
            problems.append(f"{where}: the same fact is labelled twice")
        seen.add(key)
    return problems


def load_extraction_set(path: str | Path, rb: RuleBase) -> Dataset:
    """Read and check every line against the rule base; the first bad line raises a DatasetError naming it."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file")
    items: list[ExtractionItem] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = ExtractionItem.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            except ValidationError as exc:
                why = "; ".join(f"field '{'.'.join(map(str, e['loc'])) or 'line'}': {e['msg']}" for e in exc.errors())
                raise DatasetError(f"{path}:{lineno}: invalid extraction line: {why}") from None
            if item.id in seen:
                raise DatasetError(f"{path}:{lineno}: duplicate id {item.id!r} (first on line {seen[item.id]})")
            problems = label_problems(item, rb)
            if problems:
                raise DatasetError(f"{path}:{lineno}: item {item.id!r}: " + "; ".join(problems))
            seen[item.id] = lineno
            items.append(item)
    if not items:
        raise DatasetError(f"{path}: the dataset is empty")
    return Dataset(str(path), "extraction", items)


# ---- reading and scoring -----------------------------------------------------------------------------

def claims_reader(read_claims: Callable[[str, str], list[Claim]]) -> Reader:
    """Adapter from ``Answerer.read_claims(question, answer) -> list[symbolic.Claim]`` to claim dicts."""
    def read(question: str, answer: str) -> list[dict]:
        out = []
        for c in read_claims(question, answer):
            args = list(c.fact.args)
            out.append({"relation": c.fact.relation, "args": args[:-1], "value": args[-1] if args else None,
                        "extractor": c.extractor, "start": c.start, "end": c.end})
        return out
    return read


@dataclass
class ExtractionProcessor:
    """One record per labelled answer: which labelled facts the reader found (tp / fn), which of its
    claims match none (fp), split by extractor. Identical claims count once, for the first extractor."""
    read: Reader
    rulebase: Any = None                    # normalises by parameter type; None: guess from the text
    unscored: frozenset[str] = field(default_factory=frozenset)

    def __call__(self, item: ExtractionItem) -> dict:
        t0 = time.perf_counter()
        error = None
        try:
            raw = list(self.read(item.question, item.answer))
        except Exception as exc:   # an extractor that crashes scores zero for this answer, the run goes on
            raw, error = [], f"{type(exc).__name__}: {exc}"
        latency = (time.perf_counter() - t0) * 1000
        labelled = {fact_key(f.relation, f.args, f.value, self.rulebase): f for f in item.facts}
        found: dict[tuple, str] = {}
        claims, seen = [], set()
        by_extractor: dict[str, dict[str, int]] = defaultdict(lambda: {"claims": 0, "tp": 0, "fp": 0})
        for c in raw:
            extractor = str(c.get("extractor") or "unknown")
            args = list(c.get("args") or [])
            value = c["value"] if "value" in c else (args.pop() if args else None)
            key = fact_key(c["relation"], args, value, self.rulebase)
            rec = {"relation": c["relation"], "args": [_show(a) for a in args], "value": _show(value),
                   "extractor": extractor, "start": c.get("start"), "end": c.get("end"),
                   "scored": c["relation"] not in self.unscored, "duplicate": key in seen,
                   "match": key in labelled}
            claims.append(rec)
            if rec["duplicate"] or not rec["scored"]:
                continue
            seen.add(key)
            e = by_extractor[extractor]
            e["claims"] += 1
            if rec["match"]:
                e["tp"] += 1
                found[key] = extractor
            else:
                e["fp"] += 1
        facts = [{"relation": f.relation, "args": f.args, "value": f.value, "span": f.span,
                  "found": k in found, "by": found.get(k)} for k, f in labelled.items()]
        tp = len(found)
        return {"id": item.id, "language": item.language, "source": item.source, "model": item.model or "-",
                "question": item.question,
                "answer": item.answer, "facts": facts, "claims": claims,
                "tp": tp, "fp": sum(e["fp"] for e in by_extractor.values()), "fn": len(labelled) - tp,
                "by_extractor": dict(by_extractor), "relation_claims": sum(r["scored"] for r in claims),
                "error": error, "latency_ms": latency}


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else round(num / den, 4)


def _prf(tp: int, fp: int, fn: int) -> dict:
    p, r = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = None if p is None or r is None or p + r == 0 else round(2 * p * r / (p + r), 4)
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": f1}


def extraction_group(records: list[dict]) -> dict:
    tp, fp, fn = (sum(r[k] for r in records) for k in ("tp", "fp", "fn"))
    labelled = tp + fn
    with_claim = sum(r["relation_claims"] > 0 for r in records)
    empty = [r for r in records if not r["facts"]]
    return {"n": len(records), "labelled_facts": labelled, **_prf(tp, fp, fn),
            # answers that assert nothing the rules can express: any claim read there is a false one
            "answers_without_facts": len(empty),
            "clean_on_answers_without_facts": _ratio(sum(r["fp"] == 0 for r in empty), len(empty)),
            "answers_with_claim": with_claim, "answers_with_claim_share": _ratio(with_claim, len(records)),
            "errors": sum(r.get("error") is not None for r in records)}


def extraction_summary(records: list[dict]) -> dict:
    out: dict = {"kind": "extraction", **extraction_group(records)}
    labelled = out["labelled_facts"]
    per: dict[str, dict[str, int]] = defaultdict(lambda: {"claims": 0, "tp": 0, "fp": 0})
    for r in records:
        for name, e in r["by_extractor"].items():
            for k in ("claims", "tp", "fp"):
                per[name][k] += e[k]
    # an extractor's recall counts only its own hits against every labelled fact
    out["by_extractor"] = {name: {**e, "precision": _ratio(e["tp"], e["tp"] + e["fp"]),
                                  "recall": _ratio(e["tp"], labelled)} for name, e in sorted(per.items())}
    out["unscored_claims"] = sum(not c["scored"] for r in records for c in r["claims"])
    out["duplicate_claims"] = sum(c["duplicate"] and c["scored"] for r in records for c in r["claims"])
    for fld in ("language", "source", "model"):
        out[f"by_{fld}"] = by_field(records, fld, extraction_group)
    return out
