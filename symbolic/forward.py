"""Forward chaining: rule-file rules compiled into experta (RETE) rules with salience, negation and
tests; derives facts and fires violations; firing and assertion caps guarantee termination."""
from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any

from experta import AS, MATCH, NOT, TEST, W, KnowledgeEngine, Rule
from experta import Fact as XFact

from . import model as m
from .cf import THRESHOLD, effective_cf
from .facts import Fact, Provenance
from .check_builtins import aggregate_relations
from .strata import effective_salience, strata
from .terms import EvalError, evaluate, render, test


@dataclass
class Violation:
    """A fired ``violation``. Indices number the *input* facts: for ``ForwardChainer.run(facts)`` they
    index ``facts``; for ``Verifier.verify(claims, evidence)`` they index ``[*evidence, *(c.fact for c
    in claims)]`` (the rule base's own ``fact``s are not numbered there; they appear only in ``facts``)."""
    rule_id: str
    rule_message: str
    message: str              # the rule's violation text with variables filled in
    cf: float
    facts: list[Fact]         # the facts the rule matched, in condition order (input or derived facts)
    fact_ids: list[int] = field(default_factory=list)            # inputs it rests on: matched ones and
    #                                                               those behind matched derived facts
    fact_sources: list[list[int]] = field(default_factory=list)  # per entry of `facts`: inputs it rests on
    claim_ids: list[int] = field(default_factory=list)           # Verifier: indices into `claims` it rests on
    from_claim: list[bool] = field(default_factory=list)         # Verifier: per entry of `facts`, a claim's
    #                                                               fact or a fact derived from one

    def to_dict(self) -> dict:
        return {"rule_id": self.rule_id, "rule_message": self.rule_message, "message": self.message,
                "cf": round(self.cf, 4), "facts": [str(f) for f in self.facts], "fact_ids": self.fact_ids,
                "claim_ids": self.claim_ids, "from_claim": self.from_claim}


@dataclass
class ForwardResult:
    derived: list[Fact]
    violations: list[Violation]
    firings: int
    halted: str | None                     # why chaining stopped early (a loop report), else None
    derived_from: list[set[int]]           # per derived fact: indices of the input facts it rests on
    rule_ids: list[str]                    # the rules that took part (after relevance filtering)


class _Engine(KnowledgeEngine):
    def __init__(self, rules: list[Rule]):
        self._compiled = rules
        super().__init__()

    def get_rules(self):
        for r in self._compiled:
            r.ke = self
        return list(self._compiled)


class _Run:
    def __init__(self, facts: list[Fact], max_firings: int, max_new: int, hypothetical_from: int | None = None):
        self.facts = list(facts)                       # fid -> Fact (inputs, then derived)
        self.n_inputs = len(facts)
        self.known = {f.key for f in facts}
        # inputs from this index on are hypotheses (an answer's claims): a statement known only from them
        # is derived again from the evidence alone, so that the evidence supports it (B1)
        self.hypo = len(facts) if hypothetical_from is None else hypothetical_from
        self.grounded = {f.key for f in facts[:self.hypo]}
        self.violations: list[Violation] = []
        self.seen_violations: set[tuple] = set()
        self.firings: Counter = Counter()
        self.depends: dict[int, set[int]] = {i: {i} for i in range(len(facts))}
        self.max_firings, self.max_new = max_firings, max_new
        self.halted: str | None = None


def _pattern(atom: m.Atom, bound: set[str], negated: bool) -> XFact:
    fields: dict[str, Any] = {"rel": atom.relation}
    for i, a in enumerate(atom.args):
        if isinstance(a, m.Const):
            fields[f"a{i}"] = a.value
        elif isinstance(a, m.Var):
            # inside `not`, a variable no positive condition binds matches anything
            fields[f"a{i}"] = W() if negated and a.name not in bound else getattr(MATCH, "v_" + a.name)
    if atom.source is not None:
        fields["doc"] = getattr(MATCH, "v_" + atom.source.name)
    return XFact(**fields)


def _test_function(c: m.Comparison | m.Builtin):
    names = sorted(m.term_vars(c))
    params = ", ".join("v_" + n for n in names)
    env = ", ".join(f"{n!r}: v_{n}" for n in names)
    return eval(f"lambda {params}: _test(_c, {{{env}}})", {"_test": test, "_c": c})


def compile_rule(rule: m.ForwardRule, stratum: int = 0) -> Rule:
    bound = set().union(*(m.term_vars(c) for c in rule.conditions if isinstance(c, m.Atom))) \
        if rule.conditions else set()
    ces: list = []
    n_pos = 0
    for c in rule.conditions:
        if isinstance(c, m.Atom):
            ces.append(getattr(AS, f"f{n_pos}") << _pattern(c, bound, False))
            n_pos += 1
        elif isinstance(c, m.Not):
            ces.append(NOT(_pattern(c.atom, bound, True)))
    # aggregates look at the facts, so they are checked when the rule fires (their facts' producers
    # have all finished by then: stratification puts the rule above them)
    post = [c for c in rule.conditions if isinstance(c, m.Comparison) and m.aggregates(c)]
    ces += [TEST(_test_function(c)) for c in rule.conditions
            if isinstance(c, m.Builtin) or (isinstance(c, m.Comparison) and c not in post)]
    if n_pos == 0:
        ces.insert(0, XFact())  # the InitialFact starts rules made only of `not` conditions

    def fire(engine: _Engine, **ctx: Any) -> None:
        run: _Run = engine._run
        matched = [ctx[f"f{i}"] for i in range(n_pos)]
        fids = [x["fid"] for x in matched]
        premise = min((x["cf"] for x in matched), default=1.0)
        if premise <= THRESHOLD:
            return
        if post:
            env0 = {k[2:]: v for k, v in ctx.items() if k.startswith("v_")}
            if not all(test(c, env0, _solver(run)) for c in post):
                return
        run.firings[rule.id] += 1
        if sum(run.firings.values()) > run.max_firings:
            _halt(engine, run, f"more than {run.max_firings} rule firings")
            return
        env = {k[2:]: v for k, v in ctx.items() if k.startswith("v_")}
        sources = set().union(*(run.depends[i] for i in fids)) if fids else set()
        for action in rule.actions:
            cf = premise * rule.cf
            if isinstance(action, m.ViolationAction):
                text = render(action.message, env)
                key = (rule.id, text, tuple(sorted(fids)))
                if key not in run.seen_violations:
                    run.seen_violations.add(key)
                    run.violations.append(Violation(rule.id, rule.message, text, cf,
                                                    [run.facts[i] for i in fids], sorted(sources),
                                                    [sorted(run.depends[i]) for i in fids]))
                continue
            try:
                args = tuple(evaluate(a, env) for a in action.atom.args)
            except EvalError:
                continue
            fact = Fact(action.atom.relation, args, max(-1.0, min(1.0, cf * action.cf)),
                        Provenance("derived", rule_id=rule.id))
            grounded = all(i < run.hypo for i in sources)
            if fact.key in run.known:
                if grounded and fact.key not in run.grounded:
                    # the statement was known from a claim; the evidence derives it too: keep that
                    # derivation (not declared again: the RETE network already has the statement)
                    run.grounded.add(fact.key)
                    run.depends[len(run.facts)] = sources
                    run.facts.append(fact)
                continue
            if grounded:
                run.grounded.add(fact.key)
            if len(run.facts) - run.n_inputs >= run.max_new:
                _halt(engine, run, f"more than {run.max_new} derived facts")
                return
            run.known.add(fact.key)
            fid = len(run.facts)
            run.facts.append(fact)
            run.depends[fid] = sources
            engine.declare(_xfact(fact, fid))

    fire.__name__ = f"rule_{rule.key}"
    return Rule(*ces, salience=effective_salience(rule, stratum))(fire)


def _solver(run: _Run):
    """An aggregate's view of working memory: the bindings of every fact matching the atom (CF above
    the threshold), given the rule's bindings so far."""
    def solve(atom: m.Atom, env: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for f in run.facts:
            if f.relation != atom.relation or len(f.args) != len(atom.args) or effective_cf(f) <= THRESHOLD:
                continue
            b = dict(env)
            for a, v in zip(atom.args, f.args):
                if isinstance(a, m.Var) and b.setdefault(a.name, v) != v:
                    break
                if isinstance(a, m.Const) and a.value != v:
                    break
            else:
                out.append(b)
        return out
    return solve


def _halt(engine: _Engine, run: _Run, why: str) -> None:
    top = ", ".join(f"{rid} ({n} firings)" for rid, n in run.firings.most_common(5))
    run.halted = f"forward chaining stopped after {why}: rules {top} keep firing — a cycle of rules " \
                 f"that keeps asserting new facts?"
    engine.halt()


def _xfact(f: Fact, fid: int) -> XFact:
    fields = {"rel": f.relation, "cf": effective_cf(f), "fid": fid, "doc": f.provenance.doc_id}
    fields.update({f"a{i}": a for i, a in enumerate(f.args)})
    return XFact(**fields)


class ForwardChainer:
    """Runs a rule base's forward rules. Only rules relevant to the facts' relations are activated,
    and only facts those rules can match are handed to the RETE network."""

    def __init__(self, rules: list[m.ForwardRule], *, max_firings: int = 1000, max_new_facts: int = 5000,
                 cache_size: int = 64):
        self.rules = {r.key: r for r in rules}
        self.strata, self.negation_cycles = strata(rules)
        self.max_firings, self.max_new = max_firings, max_new_facts
        self._compiled: dict[str, Rule] = {}
        self._engines: OrderedDict[frozenset, tuple[_Engine, threading.Lock]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.uses: dict[str, set[str]] = {}
        self.produces: dict[str, set[str]] = {}
        self.by_relation: dict[str, set[str]] = {}
        for r in rules:
            self.uses[r.key] = {c.relation if isinstance(c, m.Atom) else c.atom.relation
                                for c in r.conditions if isinstance(c, (m.Atom, m.Not))} | \
                set().union(*(aggregate_relations(c) for c in r.conditions))
            self.produces[r.key] = {a.atom.relation for a in r.actions if isinstance(a, m.AssertAction)}
            for rel in self.uses[r.key]:
                self.by_relation.setdefault(rel, set()).add(r.key)
        self.producers: dict[str, set[str]] = {}
        for rid, rels in self.produces.items():
            for rel in rels:
                self.producers.setdefault(rel, set()).add(rid)
        self._relevant: dict[frozenset, frozenset] = {}

    def relevant_rules(self, relations: set[str]) -> set[str]:
        """Rules matching any of ``relations``, then (to a fixed point) rules feeding those rules
        and rules fed by them."""
        key = frozenset(relations)
        if key in self._relevant:
            return set(self._relevant[key])
        # rules matching the relations, and rules deriving them (they can support or contradict a claim)
        chosen = set().union(*(self.by_relation.get(r, set()) | self.producers.get(r, set()) for r in relations)) \
            if relations else set()
        frontier = set(chosen)
        while frontier:
            new = set()
            for rid in frontier:
                for rel in self.produces[rid]:
                    new |= self.by_relation.get(rel, set())
                for rel in self.uses[rid]:
                    new |= self.producers.get(rel, set())
            frontier = new - chosen
            chosen |= frontier
        if len(self._relevant) < 4096:
            self._relevant[key] = frozenset(chosen)
        return chosen

    def _engine(self, rule_ids: frozenset) -> tuple[_Engine, threading.Lock]:
        with self._lock:
            hit = self._engines.get(rule_ids)
            if hit:
                self._engines.move_to_end(rule_ids)
                return hit
            rules = []
            for rid in sorted(rule_ids):
                if rid not in self._compiled:
                    self._compiled[rid] = compile_rule(self.rules[rid], self.strata[rid])
                rules.append(self._compiled[rid])
            hit = (_Engine(rules), threading.Lock())
            self._engines[rule_ids] = hit
            if len(self._engines) > self._cache_size:
                self._engines.popitem(last=False)
            return hit

    def run(self, facts: list[Fact], *, focus: set[str] | None = None,
            hypothetical_from: int | None = None) -> ForwardResult:
        """Chain to a fixed point over ``facts``. ``focus``: only rules relevant to these relations
        (default: the relations of ``facts``). ``hypothetical_from``: ``facts[i]`` from this index on are
        hypotheses (claims); a statement they share with what the other facts derive is derived twice,
        once from each, so ``derived_from`` shows the evidence-only derivation too."""
        rule_ids = frozenset(self.relevant_rules(focus if focus is not None else {f.relation for f in facts}))
        if not rule_ids:
            return ForwardResult([], [], 0, None, [], [])
        used = set().union(*(self.uses[r] for r in rule_ids))
        keep = [i for i, f in enumerate(facts) if f.relation in used]
        facts = [facts[i] for i in keep]
        hypo = None if hypothetical_from is None else sum(i < hypothetical_from for i in keep)
        run = _Run(facts, self.max_firings, self.max_new, hypo)
        engine, lock = self._engine(rule_ids)
        with lock:
            engine.reset()
            engine._run = run
            engine.declare(*[_xfact(f, i) for i, f in enumerate(facts)]) if facts else None
            engine.run(self.max_firings + 1)
            engine._run = None
        for v in run.violations:  # back to the caller's numbering of the input facts
            v.fact_ids = sorted(keep[i] for i in v.fact_ids)
            v.fact_sources = [sorted(keep[i] for i in src) for src in v.fact_sources]
        derived_from = [{keep[i] for i in run.depends[fid]} for fid in range(run.n_inputs, len(run.facts))]
        return ForwardResult(run.facts[run.n_inputs:], run.violations, sum(run.firings.values()), run.halted,
                             derived_from, sorted(rule_ids))
