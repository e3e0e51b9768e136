"""`verirag rules check [DIR]` (parse + lint a rule base), `verirag rules explain GOAL --facts FILE` and
`verirag rules test FILE` (api/commands/rules_test.py)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline.defaults import DEFAULT_RULES_DIR
from symbolic import BackwardChainer, RuleError, RuleErrors, load_rulebase
from symbolic import model as m
from symbolic.check import Checker
from symbolic.explain import how_json, how_text, why_json, why_text
from symbolic.fact_input import load_facts_file
from symbolic.parser import parse_text

from api.commands import rules_facts, rules_question, rules_test
from api.commands.rules_claim import explain_claim


def register(subparsers) -> None:
    p = subparsers.add_parser("rules", help="check rule files or explain a goal")
    sub = p.add_subparsers(dest="rules_command", metavar="ACTION")
    c = sub.add_parser("check", help="parse and lint a rule folder (default: rules/)")
    c.add_argument("dir", nargs="?", default=str(DEFAULT_RULES_DIR),
                   help="folder or .rules file (default: the embedded rules/)")
    c.add_argument("--strict", action="store_true", help="warnings fail the check too")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=check)
    e = sub.add_parser("explain", help="prove a goal, or check a claim, and print HOW/WHY")
    e.add_argument("goal", nargs="?", help="e.g. 'grandparent(tom, ?z)' (or give --claim)")
    e.add_argument("--claim", help="a claim to check instead: a sentence the patterns read, or p(a, b)")
    e.add_argument("--kb", help="a knowledge base folder: every fact its documents state is evidence")
    e.add_argument("--facts", help="facts: a .rules file of `fact` lines, or a JSON/YAML list "
                                   "[{\"relation\": ..., \"args\": [...], \"cf\": ...}]")
    e.add_argument("--rules", default=str(DEFAULT_RULES_DIR), help="rule folder or file (default: the embedded rules/)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=explain)
    rules_test.register(sub)
    rules_facts.register(sub)
    rules_question.register(sub)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _errors(exc: RuleError) -> list[RuleError]:
    return list(exc.errors) if isinstance(exc, RuleErrors) else [exc]


def check(args: argparse.Namespace) -> int:
    try:
        rb = load_rulebase(args.dir)
    except RuleError as exc:
        errs = _errors(exc)
        if args.json:
            print(json.dumps({"ok": False, "errors": [_err_json(e) for e in errs], "warnings": []}, ensure_ascii=False))
        else:
            for e in errs:
                print(e, file=sys.stderr)
            print(f"{len(errs)} error(s)", file=sys.stderr)
        return 1
    failed = bool(rb.warnings) and args.strict
    limits = _limits(rb)
    english_only = _english_only(rb)
    checked = _checked_limits(rb)
    if args.json:
        print(json.dumps({"ok": not failed, "errors": [], "warnings": [_err_json(w) for w in rb.warnings],
                          "files": rb.files, "relations": len(rb.relations), "rules": len(rb.forward_rules),
                          "goals": len(rb.backward_rules), "patterns": len(rb.patterns), "facts": len(rb.facts),
                          "links": len(rb.links), "limits": limits, "checked_limits": checked,
                          "no_chinese_name": english_only},
                         ensure_ascii=False))
    else:
        for w in rb.warnings:
            print(w, file=sys.stderr)
        print(f"ok: {len(rb.files)} file(s), {len(rb.relations)} relations, {len(rb.entities)} entities, "
              f"{len(rb.patterns)} patterns, {len(rb.facts)} facts, {len(rb.forward_rules)} rules, "
              f"{len(rb.backward_rules)} goals, {len(rb.links)} links, {len(rb.warnings)} warning(s)")
        for kind in ("upper", "lower"):
            if limits[kind]:
                print(f"{kind} limits: {', '.join(limits[kind])}")
        if limits["upper"] or limits["lower"]:
            print("  (a yes/no question's value past one is answered no; `limit upper|lower|none` on a relation "
                  "overrides what its names say)")
        for goal, limit in checked.items():
            print(f"checking goal {goal}: its open value is asked of {limit}, and a value it refutes is past it")
        if english_only:
            print(f"{len(english_only)} relation(s) with no Chinese name and no Chinese pattern words: Chinese "
                  f"questions and answers are not read into them (add a Chinese `aka`): {', '.join(english_only)}")
    return 1 if failed else 0


def _english_only(rb) -> list[str]:
    """Relations no Chinese text can name: no label or alias with a CJK character, and no plain pattern whose
    required words are Chinese (pipeline.readers.vocabulary.pattern_names)."""
    from pipeline.text.script import is_chinese
    from pipeline.question.naming import relation_names
    from pipeline.readers.vocabulary import pattern_names

    named = pattern_names(rb)
    return [sig.name for sig in rb.relations.values()
            if not any(is_chinese(n) for n in [*relation_names(sig), *named.get(sig.name, [])])]


def _checked_limits(rb) -> dict[str, str]:
    """Checking goal -> the one limit it is checked against (pipeline/proof/limit_check.py)."""
    from pipeline.proof.limits import checked_limit, checking_relations
    out = {}
    for name in sorted(checking_relations(rb)):
        limit = checked_limit(name, rb)
        if limit is not None:
            out[name] = limit
    return out


def _limits(rb) -> dict[str, list[str]]:
    """The value relations the limit checks take as upper or lower limits (pipeline/proof/limit_check.py)."""
    from pipeline.proof.limits import limit_direction
    out: dict[str, list[str]] = {"upper": [], "lower": []}
    for sig in rb.relations.values():
        if sig.arity >= 2 and sig.params[-1].type in m.VALUE_TYPES:
            kind = limit_direction(sig)
            if kind is not None:
                out[kind].append(sig.name)
    return out


def _err_json(e: RuleError) -> dict:
    return {"path": e.path, "line": e.line, "column": e.column, "message": e.message, "severity": e.severity}


def _goal_atom(text: str, rb) -> m.Atom:
    pf, errs = parse_text(f"fact {text}", "<goal>")
    if errs or len(pf.facts) != 1:
        detail = errs[0].message if errs else "expected one goal such as grandparent(tom, ?z)"
        raise ValueError(f"cannot read the goal {text!r}: {detail}")
    ck = Checker({}, rb.types, rb.entities, rb.relations)
    atom = ck.check_atom(pf.facts[0].atom, {})
    if ck.errors:
        raise ValueError(f"bad goal {text!r}: {ck.errors[0].message}")
    return atom


def explain(args: argparse.Namespace) -> int:
    if (args.goal is None) == (args.claim is None):
        print("error: give a goal, or --claim TEXT (one of the two)", file=sys.stderr)
        return 2
    facts_path = Path(args.facts) if args.facts else None
    if facts_path is not None and not facts_path.exists():
        print(f"error: no such facts file: {facts_path}", file=sys.stderr)
        return 2
    try:
        is_rules = facts_path is not None and facts_path.suffix == ".rules"
        rb = load_rulebase([args.rules, facts_path] if is_rules else args.rules)
        facts = list(rb.facts) if is_rules or facts_path is None else [*rb.facts, *load_facts_file(facts_path, rb)]
        if args.kb:
            from api.commands.kb_evidence import kb_facts
            facts += kb_facts(args.kb, rb).facts
        if args.claim is not None:
            return explain_claim(args, rb, [f for f in facts if f.provenance.source != "rulebase"])
        atom = _goal_atom(args.goal, rb)
    except RuleError as exc:
        for e in _errors(exc):
            print(e, file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bc = BackwardChainer(rb.backward_rules, facts)
    pattern = tuple(a if isinstance(a, m.Var) else m.Var("_") if isinstance(a, m.Wildcard) else a.value
                    for a in atom.args)
    nodes = [n for n in bc.prove(atom.relation, pattern) if n.cf > 0.2]
    if args.json:
        print(json.dumps({"goal": args.goal, "proved": bool(nodes), "conclusions": [how_json(n) for n in nodes],
                          "asked": [why_json(a) for a in bc.asked]}, ensure_ascii=False))
    else:
        if nodes:
            print("HOW:")
            for n in nodes:
                print(how_text(n, 1))
        else:
            print(f"{args.goal}: not proved (no conclusion above CF 0.2)")
        open_goals = [a for a in bc.asked if a.cf is None or a.cf <= 0.2]
        if open_goals:
            print("WHY (goals asked but not proved):")
            for a in open_goals:
                print("  " + why_text(a).replace("\n", "\n  "))
    return 0 if nodes else 1
