"""Backward chaining: goal-directed proofs from facts and goal rules with MYCIN certainty factors,
loop detection for recursive rules and a depth limit; every proof is kept for HOW/WHY explanations."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import model as m
from .cf import THRESHOLD, combine_all, conclude, conjunction, effective_cf
from .facts import Fact
from .terms import evaluate, test
from .values import format_value


@dataclass
class Support:
    """One reason for a conclusion: a fact, or a goal rule whose premises held."""
    cf: float
    fact: Fact | None = None
    rule: m.BackwardRule | None = None
    premise_cf: float = 1.0
    premises: list["Node | dict"] = field(default_factory=list)


@dataclass
class Node:
    """A ground conclusion with its combined CF and every support found for it."""
    relation: str
    args: tuple
    cf: float
    supports: list[Support]

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(format_value(a) for a in self.args)})"

    @property
    def rule_ids(self) -> list[str]:
        out: list[str] = []
        for s in self.supports:
            if s.rule and s.rule.id not in out:
                out.append(s.rule.id)
            for p in s.premises:
                if isinstance(p, Node):
                    out += [r for r in p.rule_ids if r not in out]
        return out

    @property
    def facts(self) -> list[Fact]:
        out: list[Fact] = []
        for s in self.supports:
            if s.fact is not None:
                out.append(s.fact)
            for p in s.premises:
                if isinstance(p, Node):
                    out += p.facts
        return out


@dataclass
class Asked:
    """A goal the chainer asked (for WHY): the pattern, who asked it, and the best CF found."""
    goal: str
    why: list[tuple[str, str]]   # (rule id, the goal that rule was proving), innermost first
    cf: float | None = None
    loop: bool = False
    depth_limited: bool = False


def _fmt(relation: str, pattern: tuple) -> str:
    return f"{relation}({', '.join(str(a) if isinstance(a, m.Var) else format_value(a) for a in pattern)})"


class BackwardChainer:
    def __init__(self, rules: list[m.BackwardRule], facts: list[Fact], *, max_depth: int = 20):
        self.max_depth = max_depth
        self.rules_by_head: dict[str, list[m.BackwardRule]] = {}
        # per rule: conclusion variables no premise fact binds; they come from the goal asked (a claim)
        self.from_claim: dict[tuple[str, int], set[str]] = {}
        for r in rules:
            self.rules_by_head.setdefault(r.head.relation, []).append(r)
            bound = set().union(*(m.term_vars(c) for c in r.premises if isinstance(c, m.Atom))) \
                if r.premises else set()
            self.from_claim[(r.id, r.variant)] = m.term_vars(r.head) - bound
        self.facts: dict[str, list[Fact]] = {}
        for f in facts:
            self.facts.setdefault(f.relation, []).append(f)
        self.asked: list[Asked] = []
        self._memo: dict[tuple, dict[tuple, Node]] = {}

    def prove(self, relation: str, pattern: tuple) -> list[Node]:
        """Every ground instance of ``relation(pattern)`` (Var entries are unknowns) with CF != 0,
        strongest first."""
        self._memo.clear()
        nodes = self._solve(relation, tuple(pattern), 0, (), [])
        return sorted(nodes.values(), key=lambda n: -n.cf)

    # ------------------------------------------------------------------------------------------
    def _solve(self, relation: str, pattern: tuple, depth: int, stack: tuple, why: list) -> dict[tuple, Node]:
        key = (relation, tuple(("?",) if isinstance(a, m.Var) else a for a in pattern))
        asked = Asked(_fmt(relation, pattern), list(why))
        self.asked.append(asked)
        if key in stack:
            asked.loop = True
            return {}
        if key in self._memo:
            res = self._memo[key]
            asked.cf = max((n.cf for n in res.values()), default=None)
            return res
        if depth > self.max_depth:
            asked.depth_limited = True
            return {}
        rules = self.rules_by_head.get(relation, ())
        if pattern and not isinstance(pattern[-1], m.Var) and any(r.ordered for r in rules):
            # first match decides: what the goals decide for the subject, then whether it is the value asked
            opened = self._solve(relation, (*pattern[:-1], m.Var("#value")), depth, stack, why)
            result = {args: node for args, node in opened.items() if args[-1] == pattern[-1]}
            self._memo[key] = result
            asked.cf = max((n.cf for n in result.values()), default=None)
            return result
        found: dict[tuple, list[Support]] = {}
        for f in self.facts.get(relation, ()):
            if len(f.args) == len(pattern) and all(isinstance(p, m.Var) or p == a for p, a in zip(pattern, f.args)):
                found.setdefault(f.args, []).append(Support(effective_cf(f), fact=f))
        decided: dict[tuple, str] = {}     # an ordered relation's subject -> the goal that proved a value for it
        for rule in rules:
            if rule.ordered:
                for args, sups in found.items():
                    first = next((s.rule.id for s in sups
                                  if s.rule is not None and s.rule.id != rule.id and s.cf > THRESHOLD), None)
                    if first is not None:
                        decided.setdefault(args[:-1], first)
            env = _unify_head(rule.head, pattern)
            if env is None or not self.from_claim[(rule.id, rule.variant)] <= env.keys():
                continue   # a value the premises only check cannot be enumerated: it must be asked
            sub_why = [(rule.id, asked.goal), *why]
            for env2, premises, cfs in self._conj(rule.premises, env, depth + 1, (*stack, key), sub_why):
                pcf = conjunction(cfs)
                cf = conclude(pcf, rule.cf)
                if cf == 0.0:
                    continue
                try:
                    args = tuple(evaluate(a, env2) for a in rule.head.args)
                except TypeError:
                    continue
                if any(not isinstance(p, m.Var) and p != a for p, a in zip(pattern, args)):
                    continue   # a computed argument (`?x * ?n`) that is not the value asked about
                if rule.ordered and decided.get(args[:-1], rule.id) != rule.id:
                    continue   # an earlier goal decided this subject
                found.setdefault(args, []).append(Support(cf, rule=rule, premise_cf=pcf, premises=premises))
        result = {args: Node(relation, args, combine_all([s.cf for s in sups]), sups) for args, sups in found.items()}
        self._memo[key] = result
        asked.cf = max((n.cf for n in result.values()), default=None)
        return result

    def _solver(self, depth: int, stack: tuple, why: list):
        """An aggregate's view: the bindings of every proved instance of an atom (CF above 0.2)."""
        def solve(atom: m.Atom, env: dict[str, Any]) -> list[dict[str, Any]]:
            out = []
            for args, node in self._solve(atom.relation, _substitute(atom, env), depth, stack, why).items():
                b = _bind(atom, args, env) if node.cf > THRESHOLD else None
                if b is not None:
                    out.append(b)
            return out
        return solve

    def _conj(self, premises: list, env: dict[str, Any], depth: int, stack: tuple, why: list):
        """Solutions of a conjunction: (bindings, premise proofs, premise CFs); a conjunct holds above 0.2."""
        if not premises:
            yield env, [], []
            return
        k = _next_ready(premises, env)
        first, rest = premises[k], premises[:k] + premises[k + 1:]
        if isinstance(first, (m.Comparison, m.Builtin)):
            solve = self._solver(depth, stack, why)
            if test(first, env, solve):
                for e2, proofs, cfs in self._conj(rest, env, depth, stack, why):
                    yield e2, [{"kind": "test", "text": _show(first, env, solve), "holds": True}, *proofs], cfs
            return
        if isinstance(first, m.Not):
            pat = _substitute(first.atom, env)
            nodes = self._solve(first.atom.relation, pat, depth, stack, why)
            best = max((n.cf for n in nodes.values()), default=0.0)
            if best <= THRESHOLD:
                for e2, proofs, cfs in self._conj(rest, env, depth, stack, why):
                    # negation as failure: a closed-world assumption, shown as one in the trace (HOW)
                    yield e2, [{"kind": "not", "text": f"not {_fmt(first.atom.relation, pat)}", "holds": True,
                                "best_cf": best, "relation": first.atom.relation,
                                "args": [None if isinstance(a, m.Var) else format_value(a) for a in pat]}, *proofs], cfs
            return
        pat = _substitute(first, env)
        for args, node in self._solve(first.relation, pat, depth, stack, why).items():
            if node.cf <= THRESHOLD:
                continue
            env2 = _bind(first, args, env)
            if env2 is None:
                continue
            for env3, cf in _sources(first, node, env2):
                for e3, proofs, cfs in self._conj(rest, env3, depth, stack, why):
                    yield e3, [node, *proofs], [cf, *cfs]


def _sources(atom: m.Atom, node: Node, env: dict[str, Any]):
    """`… from ?doc`: one binding per document a fact supporting the node comes from, at that fact's CF
    (a conclusion of goal rules has no document); without `from`, the node itself."""
    if atom.source is None:
        yield env, node.cf
        return
    name = atom.source.name
    for s in node.supports:
        doc = s.fact.provenance.doc_id if s.fact is not None else None
        if doc is not None and s.cf > THRESHOLD and env.get(name, doc) == doc:
            yield {**env, name: doc}, s.cf


def _next_ready(premises: list, env: dict[str, Any]) -> int:
    """The first premise that can run now, so premise order never matters (B5): a comparison once its
    variables are bound, a `not` once every variable a remaining positive premise binds is bound (its
    other variables match anything); a fact premise always. With none ready, the first one runs (and a
    comparison over an unbound variable fails)."""
    later = set().union(*(m.term_vars(p) for p in premises if isinstance(p, m.Atom)))
    for i, p in enumerate(premises):
        if isinstance(p, m.Atom):
            return i
        need = m.outer_vars(p, later | env.keys()) if isinstance(p, (m.Comparison, m.Builtin)) \
            else m.term_vars(p) & later
        if need <= env.keys():
            return i
    return 0


def _substitute(atom: m.Atom, env: dict[str, Any]) -> tuple:
    out = []
    for a in atom.args:
        if isinstance(a, m.Var):
            out.append(env.get(a.name, a))
        elif isinstance(a, m.Wildcard):
            out.append(m.Var("_"))
        else:
            out.append(evaluate(a, env))
    return tuple(out)


def _bind(atom: m.Atom, args: tuple, env: dict[str, Any]) -> dict[str, Any] | None:
    env = dict(env)
    for a, v in zip(atom.args, args):
        if isinstance(a, m.Var):
            if a.name in env and env[a.name] != v:
                return None
            env[a.name] = v
    return env


def _unify_head(head: m.Atom, pattern: tuple) -> dict[str, Any] | None:
    env: dict[str, Any] = {}
    for h, p in zip(head.args, pattern):
        if isinstance(p, m.Var):
            continue
        if isinstance(h, m.Var):
            if h.name in env and env[h.name] != p:
                return None
            env[h.name] = p
        elif isinstance(h, m.Const) and h.value != p:
            return None
    return env


def _show(c: m.Comparison | m.Builtin, env: dict[str, Any], solve=None) -> str:
    def side(t):
        try:
            return format_value(evaluate(t, env, solve))
        except TypeError:
            return str(t)
    if isinstance(c, m.Builtin):
        return f"{c} ({c.name}({', '.join(side(a) for a in c.args)}))"
    return f"{c} ({side(c.left)} {c.op} {side(c.right)})"
