"""`verirag rules test FILE…`: a rule author's YAML cases (a claim, evidence, the expected verdict) run
against a rule base like pytest: a pass/fail table, the explanation of every failure, exit 1 on any."""
from __future__ import annotations

import argparse
import json
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.defaults import DEFAULT_RULES_DIR
from symbolic import Claim, Fact, Provenance, RuleError, RuleErrors, Verifier, load_rulebase
from symbolic.explain import verdict_cf
from symbolic.fact_input import Item, fact_from_item
from symbolic.verifier import VERDICTS
from symbolic.yaml_items import load_yaml

CASE_KEYS = {"name", "claim", "relation", "facts", "kb", "expect", "rule", "cf"}
FILE_KEYS = {"rules", "kb", "cases"}


@dataclass
class Case:
    name: str
    line: int
    claim: Any                     # text, or {"relation", "args"}
    expect: str
    rule: str | None = None
    cf: float | None = None
    relation: str | None = None    # which of the text's claims is meant, when it makes several
    facts: list[Item] = field(default_factory=list)
    kb: str | None = None          # a KB folder (resolved), or None for no KB evidence


@dataclass
class Outcome:
    case: Case
    passed: bool
    got: str                       # the verdict, or "error"
    detail: str                    # why it failed / the explanation


def _fail(path: str, line: int, msg: str) -> RuleErrors:
    from symbolic.errors import Location
    return RuleErrors([RuleError(msg, Location(path, line, 1))])


def read_cases(path: Path) -> tuple[list[Case], str | None]:
    """The cases of one test file and its `rules:` folder (resolved; None: not given)."""
    text = path.read_text(encoding="utf-8")
    doc = load_yaml(text, str(path))
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise _fail(str(path), 1, "a rule test file has `cases:`, a list of {name, claim, expect, …}")
    unknown = set(doc) - FILE_KEYS
    if unknown:
        raise _fail(str(path), 1, f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(FILE_KEYS))})")
    base = path.parent
    rules = str((base / doc["rules"]).resolve()) if doc.get("rules") else None
    file_kb = doc.get("kb")
    if file_kb is not None and not isinstance(file_kb, (str, bool)):
        raise _fail(str(path), getattr(doc, "line", 1),
                    f"kb is a KB folder relative to this file (or false), not {file_kb!r}")
    cases, errors = [], []
    for i, c in enumerate(doc["cases"], 1):
        line = getattr(c, "line", 1)
        try:
            cases.append(_case(c, i, line, base, file_kb, str(path)))
        except RuleErrors as exc:
            errors += exc.errors
    if errors:
        raise RuleErrors(errors)
    return cases, rules


def _case(c: Any, i: int, line: int, base: Path, file_kb: Any, path: str) -> Case:
    if not isinstance(c, dict):
        raise _fail(path, line, f"case {i} must be a mapping with name, claim and expect")
    unknown = set(c) - CASE_KEYS
    if unknown:
        raise _fail(path, line, f"case {i}: unknown key(s) {', '.join(sorted(unknown))} "
                                f"(known: {', '.join(sorted(CASE_KEYS))})")
    for key in ("claim", "expect"):
        if key not in c:
            raise _fail(path, line, f"case {i} needs `{key}`")
    if c["expect"] not in VERDICTS:
        raise _fail(path, line, f"case {i}: expect is one of {', '.join(VERDICTS)}, not {c['expect']!r}")
    kb = c.get("kb", file_kb)
    if kb is True:          # "with the KB": the file's
        if not isinstance(file_kb, str):
            raise _fail(path, line, f"case {i}: kb: true means the file's kb:, and this file gives none "
                                    "(write kb: FOLDER here or at the top of the file)")
        kb = file_kb
    elif kb is not None and not isinstance(kb, (str, bool)):
        raise _fail(path, line, f"case {i}: kb is a KB folder relative to this file (or false), not {kb!r}")
    facts = [Item(f, getattr(f, "line", line)) for f in (c.get("facts") or [])]
    return Case(str(c.get("name") or f"case {i}"), line, c["claim"], c["expect"], c.get("rule"),
                None if c.get("cf") is None else float(c["cf"]), c.get("relation"), facts,
                str((base / kb).resolve()) if kb else None)


def _claims(case: Case, rb: Any, path: str) -> list[Claim]:
    if isinstance(case.claim, dict):
        fact = fact_from_item(Item(case.claim, getattr(case.claim, "line", case.line)), rb, path)
        fact = Fact(fact.relation, fact.args, 1.0, Provenance("answer"))
        return [Claim(fact, str(fact), 0, len(str(fact)))]
    text = str(case.claim)
    found = [Claim(f, text[s:e], s, e) for f, s, e in rb.extract(text, source=Provenance("answer"))]
    uniq: dict[tuple, Claim] = {}
    for c in found:   # several patterns often read one statement
        uniq.setdefault(c.fact.key, c)
    out = list(uniq.values())
    return [c for c in out if c.fact.relation == case.relation] if case.relation else out


def run_case(case: Case, rb: Any, path: str, kb_facts) -> Outcome:
    try:
        claims = _claims(case, rb, path)
        evidence = [fact_from_item(f, rb, path) for f in case.facts]
    except RuleError as exc:
        return Outcome(case, False, "error", str(exc))
    if case.kb:
        evidence += kb_facts(case.kb, rb)
    if len(claims) != 1:
        what = ", ".join(str(c.fact) for c in claims) or "nothing"
        return Outcome(case, False, "error", f"the claim must read as one fact (patterns read: {what}); "
                                             f"give `relation:` to choose, or write the claim as a relation")
    (v,) = Verifier(rb).verify(claims, evidence).claims
    ok = v.verdict == case.expect and (case.rule is None or case.rule in v.rule_ids) and \
        (case.cf is None or abs(v.cf - case.cf) <= 0.005)
    got = v.verdict + (f" [{', '.join(v.rule_ids)}]" if v.rule_ids else "") + f" {verdict_cf(v.verdict, v.cf)}"
    detail = f"claim {v.claim.fact}\n{v.explanation}"
    return Outcome(case, ok, got, detail)


def _kb_facts(kb_dir: str, rb: Any) -> list[Fact]:
    from api.commands.kb_evidence import kb_facts   # retrieval + pipeline only when a case names a KB
    return kb_facts(kb_dir, rb).facts


def register(sub) -> None:
    t = sub.add_parser("test", help="run a rule author's YAML test cases (claim, evidence, expected verdict)")
    t.add_argument("files", nargs="+", help="test files (.yaml/.yml) or folders of them")
    t.add_argument("--rules", default=None, help="rule folder (default: the file's `rules:`, else the embedded rules/)")
    t.add_argument("--json", action="store_true", help="machine-readable results")
    t.add_argument("-v", "--verbose", action="store_true", help="explain passing cases too")
    t.set_defaults(func=test)


def _width(text: str) -> int:
    """Terminal columns: Chinese characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _files(targets: list[str]) -> list[Path]:
    out: list[Path] = []
    for t in map(Path, targets):
        out += sorted(p for p in t.rglob("*") if p.suffix in (".yaml", ".yml")) if t.is_dir() else [t]
    return out


def test(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    outcomes: list[tuple[str, Outcome]] = []
    bases: dict[str, Any] = {}
    for path in _files(args.files):
        try:
            cases, rules = read_cases(path)
            target = args.rules or rules or str(DEFAULT_RULES_DIR)
            if target not in bases:
                bases[target] = load_rulebase(target)
        except (RuleError, OSError) as exc:
            errs = exc.errors if isinstance(exc, RuleErrors) else [exc]
            for e in errs:
                print(e, file=sys.stderr)
            return 2
        for case in cases:
            outcomes.append((str(path), run_case(case, bases[target], str(path), _kb_facts)))
    failed = [o for _p, o in outcomes if not o.passed]
    if args.json:
        print(json.dumps({"passed": len(outcomes) - len(failed), "failed": len(failed),
                          "cases": [{"file": p, "line": o.case.line, "name": o.case.name, "passed": o.passed,
                                     "expect": o.case.expect, "rule": o.case.rule, "got": o.got,
                                     "detail": o.detail} for p, o in outcomes]}, ensure_ascii=False))
        return 1 if failed else 0
    width = max((_width(o.case.name) for _p, o in outcomes), default=10)
    for p, o in outcomes:
        want = o.case.expect + (f" [{o.case.rule}]" if o.case.rule else "")
        name = o.case.name + " " * (width - _width(o.case.name))
        print(f"{'PASS' if o.passed else 'FAIL'}  {name}  {want:<28} got {o.got}")
        if not o.passed or args.verbose:
            print(f"      {p}:{o.case.line}")
            print("      " + o.detail.replace("\n", "\n      "))
    secs = time.perf_counter() - t0
    print(f"{len(outcomes) - len(failed)} passed, {len(failed)} failed in {secs:.2f}s")
    return 1 if failed else 0
