"""Facts written by hand (JSON or YAML items, or `relation(args)` text) checked against a rule base's
vocabulary, with errors at ``file:line`` and "did you mean" hints."""
from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from . import model as m
from .errors import Location, RuleError, RuleErrors, source_line
from .facts import Fact, Provenance
from .values import parse_value
from .yaml_items import Item, yaml_list_items


def _near(word: str, known: list[str]) -> str:
    hit = difflib.get_close_matches(word.lower(), known, n=1, cutoff=0.5)
    return f" (did you mean '{hit[0]}'?)" if hit else ""


def json_items(text: str) -> list[Item]:
    """The items of a JSON list with the line each starts on; ValueError (with its line) if not a list."""
    dec = json.JSONDecoder()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, list):
        raise ValueError("1:1: the facts JSON must be a list of {\"relation\": ..., \"args\": [...], \"cf\": ...}")
    out: list[Item] = []
    pos = text.index("[") + 1
    for _ in data:
        while text[pos] in " \t\r\n,":
            pos += 1
        value, end = dec.raw_decode(text, pos)
        out.append(Item(value, text.count("\n", 0, pos) + 1))
        pos = end
    return out


def fact_from_text(text: str, rb: Any, path: str = "<facts>", line: int = 1) -> Fact:
    """``relation(arg, …) [cf N]`` in rule-file syntax, checked like a rule file's `fact`."""
    from .check import Checker   # here, not at import time: check imports this package's values only
    from .parser import parse_text
    pf, errs = parse_text(f"fact {text}", path)
    if errs or len(pf.facts) != 1:
        detail = errs[0].message if errs else "expected one fact such as city_tier(london, tier_1)"
        raise RuleErrors([RuleError(f"cannot read the fact {text!r}: {detail}", Location(path, line, 1))])
    decl = pf.facts[0]
    ck = Checker({}, rb.types, rb.entities, rb.relations)
    atom = ck.check_atom(decl.atom, {}, ground=True)
    if ck.errors:
        raise RuleErrors([RuleError(e.message, Location(path, line, 1)) for e in ck.errors])
    return Fact(atom.relation, tuple(a.value for a in atom.args), decl.cf, Provenance("document", path))


def fact_from_item(item: Item, rb: Any, path: str, text: str = "") -> Fact:
    """A ``{"relation", "args", "cf", "doc", "superseded"}`` mapping (or a fact's text) as a Fact; RuleErrors
    at ``path:line`` for an unknown relation or entity, a wrong number of arguments or an unreadable value."""
    at = Location(path, item.line, 1)
    src = source_line(text, item.line) if text else None

    def fail(msg: str) -> RuleErrors:
        return RuleErrors([RuleError(msg, at, src)])

    data = item.data
    if isinstance(data, str):
        return fact_from_text(data, rb, path, item.line)
    if not isinstance(data, dict) or "relation" not in data or not isinstance(data.get("args"), list):
        raise fail('a fact is {"relation": <declared relation>, "args": [...], "cf": 0..1} or "relation(args)"')
    rel = str(data["relation"])
    sig = rb.relations.get(rel)
    if sig is None:
        raise fail(f"unknown relation '{rel}'{_near(rel, list(rb.relations))}")
    if len(data["args"]) != sig.arity:
        raise fail(f"{rel} takes {sig.arity} argument(s) ({', '.join(map(str, sig.params))}), got {len(data['args'])}")
    args = []
    for a, p in zip(data["args"], sig.params):
        args.append(_arg(a, p, rb, fail))
    try:
        cf = float(data.get("cf", 1.0))
    except (TypeError, ValueError):
        raise fail(f"cf must be a number in [-1, 1], got {data.get('cf')!r}") from None
    if not -1.0 <= cf <= 1.0:
        raise fail(f"certainty factor {cf:g} is outside [-1, 1]")
    prov = Provenance("document", str(data.get("doc") or path), superseded=bool(data.get("superseded", False)))
    return Fact(sig.name, tuple(args), cf, prov)


def _arg(a: Any, p: m.Param, rb: Any, fail) -> Any:
    if p.type in rb.types:
        if not isinstance(a, str):
            raise fail(f"argument {p} of a fact must name a {p.type}, got {a!r}")
        hit = rb.entity_id(a, p.type)
        if hit:
            return hit
        known = [e.id for e in rb.entities.values() if e.type == p.type]
        if known:   # a closed type: only its declared entities
            raise fail(f"'{a}' is not a {p.type}{_near(a, known)}")
        return a
    if p.type == "text":
        return str(a)
    try:
        v = parse_value(str(a))
    except ValueError as exc:
        raise fail(f"argument {p}: {exc}") from None
    if p.unit and hasattr(v, "to") and getattr(v, "unit", ""):
        try:
            v = v.to(p.unit)
        except ValueError:
            raise fail(f"unit mismatch in argument {p}: got {v}") from None
    return v


def load_facts_file(path: str | Path, rb: Any) -> list[Fact]:
    """Facts from a .json list (or .yaml/.yml list) file; RuleErrors collects every bad item."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        items = yaml_list_items(text, str(path))
    else:
        try:
            items = json_items(text)
        except ValueError as exc:
            line, col, msg = str(exc).split(":", 2)
            raise RuleErrors([RuleError(msg.strip(), Location(str(path), int(line), int(col)),
                                        source_line(text, int(line)))]) from None
    facts, errors = [], []
    for item in items:
        try:
            facts.append(fact_from_item(item, rb, str(path), text))
        except RuleErrors as exc:
            errors += exc.errors
    if errors:
        raise RuleErrors(errors)
    return facts
