"""The Verifier: claims from an answer against evidence facts -> per-claim verdicts
(supported / contradicted / unsupported / violates_rule) with CFs, rule ids and HOW explanations."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from . import model as m
from .backward import BackwardChainer, Node
from .cf import THRESHOLD, combine, combine_all, effective_cf
from .explain import how_json, how_text
from .facts import Claim, Fact
from .forward import ForwardChainer, ForwardResult, Violation
from .provenance import document_facts, precedence
from .rulebase import RuleBase

VERDICTS = ("supported", "contradicted", "unsupported", "violates_rule")


@dataclass
class ClaimVerdict:
    claim: Claim
    verdict: str
    cf: float                  # certainty of the verdict, 0..1
    rule_ids: list[str]
    explanation: str           # HOW (or why nothing was found), as text
    trace: dict = field(default_factory=dict)   # the same, structured and JSON-able

    def to_dict(self) -> dict:
        return {"text": self.claim.text, "start": self.claim.start, "end": self.claim.end,
                "relation": self.claim.fact.relation, "fact": str(self.claim.fact), "verdict": self.verdict,
                "cf": round(self.cf, 4), "rule_ids": self.rule_ids, "explanation": self.explanation,
                "trace": self.trace}


@dataclass
class Verification:
    claims: list[ClaimVerdict]
    violations: list[Violation]
    forward: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every claim is supported (an answer with no claims is trivially ok)."""
        return all(c.verdict == "supported" for c in self.claims)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "claims": [c.to_dict() for c in self.claims],
                "violations": [v.to_dict() for v in self.violations], "forward": self.forward}

    def explain(self) -> str:
        lines = [f"{'OK' if self.ok else 'NOT OK'}: {sum(c.verdict == 'supported' for c in self.claims)}"
                 f"/{len(self.claims)} claims supported"]
        for c in self.claims:
            lines.append(f"- \"{c.claim.text}\" -> {c.verdict} (CF {c.cf:.2f})"
                         + (f" [{', '.join(c.rule_ids)}]" if c.rule_ids else ""))
            lines += ["    " + ln for ln in c.explanation.splitlines()]
        for v in self.violations:
            lines.append(f"! {v.rule_id}: {v.message} (CF {v.cf:.2f})")
        if self.forward.get("halted"):
            lines.append(f"! {self.forward['halted']}")
        return "\n".join(lines)


def _subject(f: Fact, sig: m.RelationSig | None) -> tuple | None:
    """The part of a fact that must agree for two values to contradict (None: not functional)."""
    return f.args[:-1] if sig is not None and sig.functional else None


def _renumber(v: Violation, fw_at: list[int], n_evidence: int) -> None:
    """Forward-run numbering (filtered evidence and rule-base facts, then claims) -> the caller's
    ``[*evidence, *claims]`` numbering, plus which claims and which matched facts rest on a claim."""
    n = len(fw_at)

    def caller(k: int) -> int | None:
        if k >= n:
            return n_evidence + (k - n)
        return fw_at[k] if fw_at[k] < n_evidence else None   # a rule-base fact: not the caller's

    v.claim_ids = sorted({k - n for src in v.fact_sources for k in src if k >= n})
    v.from_claim = [any(k >= n for k in src) for src in v.fact_sources]
    v.fact_sources = [[c for c in map(caller, src) if c is not None] for src in v.fact_sources]
    v.fact_ids = sorted(c for c in map(caller, v.fact_ids) if c is not None)


class Verifier:
    def __init__(self, rulebase: RuleBase, *, max_depth: int = 20, max_firings: int = 1000,
                 max_new_facts: int = 5000):
        self.rb = rulebase
        self.max_depth = max_depth
        self.forward = ForwardChainer(rulebase.forward_rules, max_firings=max_firings, max_new_facts=max_new_facts)
        self._keep_cache: dict[frozenset, set[str]] = {}
        self._closure_cache: dict[frozenset, frozenset[str]] = {}

    def verify(self, claims: list[Claim], evidence: list[Fact]) -> Verification:
        """Verdicts for ``claims`` (in order) against ``evidence`` and the rule base. Each returned
        ``Violation`` carries the matched ``facts``, ``fact_ids`` into ``[*evidence, *claim facts]``,
        ``claim_ids`` into ``claims`` and ``from_claim`` per matched fact; a claim is ``violates_rule``
        when a violation rests on its fact, directly or through facts derived from it."""
        for c in claims:
            if not isinstance(c, Claim) or not isinstance(c.fact, Fact):
                raise TypeError(f"verify() takes Claim objects with a Fact, got {c!r}")
        for f in evidence:
            if not isinstance(f, Fact):
                raise TypeError(f"evidence must be Fact objects, got {f!r}")
        base, by_rel, fwd, derived_evidence = self._working_memory(claims, evidence)
        chainer: BackwardChainer | None = None
        verdicts = []
        for i, claim in enumerate(claims):
            hits = [v for v in fwd.violations if i in v.claim_ids]   # its fact, or one derived from it
            if hits:
                verdicts.append(self._violation(claim, hits))
                continue
            sig = self.rb.relations.get(claim.fact.relation)
            match, conflict, notes = self._direct(claim.fact, sig, by_rel.get(claim.fact.relation, []))
            proofs: list[Node] = []
            if not match and not conflict and self.rb.backward_rules:
                if chainer is None:
                    chainer = BackwardChainer(self.rb.backward_rules, [*base, *derived_evidence],
                                              max_depth=self.max_depth)
                proofs = self._prove(chainer, claim.fact, sig)
            verdicts.append(self._judge(claim, match, conflict, proofs, notes))
        forward = {"firings": fwd.firings, "halted": fwd.halted, "rules": fwd.rule_ids}
        return Verification(verdicts, fwd.violations, forward)

    def _working_memory(self, claims: list[Claim], evidence: list[Fact]) -> tuple[list[Fact], dict[str, list[Fact]],
                                                                                 ForwardResult, list[Fact]]:
        """The facts claims are judged by: the evidence, the rule base's facts and the documents' (indexed by
        relation, with what forward rules derive from evidence alone), and the forward run over them and the
        claims (its violations numbered as verify() documents)."""
        base = [*evidence, *self.rb.facts, *document_facts(evidence)]
        focus = self._goal_closure(frozenset(c.fact.relation for c in claims))
        by_rel: dict[str, list[Fact]] = {}
        at_rel: dict[str, list[int]] = {}
        for i, f in enumerate(base):  # the one pass over all evidence: index by relation
            by_rel.setdefault(f.relation, []).append(f)
            at_rel.setdefault(f.relation, []).append(i)
        fw_at = [i for rel in sorted(self._evidence_relations(focus)) for i in at_rel.get(rel, ())]
        n = len(fw_at)
        fwd = self.forward.run([*(base[i] for i in fw_at), *(c.fact for c in claims)], focus=focus,
                               hypothetical_from=n)
        for v in fwd.violations:
            _renumber(v, fw_at, len(evidence))
        # facts derived from evidence alone are evidence too; those resting on a claim are not
        derived_evidence = [f for f, src in zip(fwd.derived, fwd.derived_from) if all(s < n for s in src)]
        for f in derived_evidence:
            by_rel.setdefault(f.relation, []).append(f)
        return base, by_rel, fwd, derived_evidence

    def goal_chainer(self, claims: list[Claim], evidence: list[Fact]) -> BackwardChainer:
        """A backward chainer over the facts verify() proves ``claims`` from (what WHY asks it is what verify
        asked)."""
        base, _by_rel, _fwd, derived = self._working_memory(claims, evidence)
        return BackwardChainer(self.rb.backward_rules, [*base, *derived], max_depth=self.max_depth)

    def _goal_closure(self, relations: frozenset[str]) -> set[str]:
        """The claims' relations and every relation a goal proving one of them needs, to a fixed point: a fact a
        forward rule derives for a goal's premise counts, though no forward rule names the claim's relation."""
        if relations in self._closure_cache:
            return set(self._closure_cache[relations])
        out, frontier = set(relations), set(relations)
        while frontier:
            new: set[str] = set()
            for g in self.rb.backward_rules:
                if g.head.relation in frontier:
                    new |= {c.relation if isinstance(c, m.Atom) else c.atom.relation
                            for c in g.premises if isinstance(c, (m.Atom, m.Not))}
            frontier = new - out
            out |= frontier
        if len(self._closure_cache) < 4096:
            self._closure_cache[relations] = frozenset(out)
        return out

    def _evidence_relations(self, focus: set[str]) -> set[str]:
        """Relations whose evidence facts can change a claim's verdict through forward rules: those a
        relevant rule joins with other facts or tests with `not`, and (to a fixed point) those feeding
        rules that derive a relation already kept or needed by the claims or the goal rules — so a
        one-condition derivation feeds a `not` or a join (B3). A single-condition constraint never needs
        the evidence: it fires on the claim's own fact (this keeps RETE small; see bench/rules.py)."""
        key = frozenset(focus)
        if key in self._keep_cache:
            return self._keep_cache[key]
        needed = set(focus)
        for g in self.rb.backward_rules:
            needed |= {g.head.relation} | {c.relation if isinstance(c, m.Atom) else c.atom.relation
                                           for c in g.premises if isinstance(c, (m.Atom, m.Not))}
        keep: set[str] = set()
        relevant = self.forward.relevant_rules(focus)
        for rid in relevant:
            rule = self.forward.rules[rid]
            n_pos = sum(isinstance(c, m.Atom) for c in rule.conditions)
            if n_pos >= 2 or any(isinstance(c, m.Not) or m.aggregates(c) for c in rule.conditions):
                keep |= self.forward.uses[rid]
        changed = True
        while changed:
            changed = False
            for rid in relevant:
                if self.forward.produces[rid] & (needed | keep) and not self.forward.uses[rid] <= keep:
                    keep |= self.forward.uses[rid]
                    changed = True
        if len(self._keep_cache) < 4096:
            self._keep_cache[key] = keep
        return keep

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _direct(claim: Fact, sig, candidates: list[Fact]) -> tuple[list[Fact], list[Fact], list[str]]:
        match = [f for f in candidates if f.args == claim.args]
        subj = _subject(claim, sig)
        conflict = [] if subj is None else \
            [f for f in candidates if f.args[:-1] == subj and f.args[-1] != claim.args[-1]]
        return precedence(match, conflict)

    @staticmethod
    def _prove(chainer: BackwardChainer, claim: Fact, sig) -> list[Node]:
        """Proofs of the claim's subject with its value open (they may give another value), plus proofs of
        the claim itself by goals that check the value a claim supplies."""
        subj = _subject(claim, sig)
        if subj is None:
            return chainer.prove(claim.relation, claim.args)
        nodes = chainer.prove(claim.relation, (*subj, m.Var("value")))
        if not any(n.args == claim.args for n in nodes):
            nodes += chainer.prove(claim.relation, claim.args)
        return nodes

    def _judge(self, claim: Claim, match: list[Fact], conflict: list[Fact], proofs: list[Node],
               notes: Sequence[str] = ()) -> ClaimVerdict:
        fact = claim.fact
        pro = [effective_cf(f) for f in match] + [p.cf for p in proofs if p.args == fact.args]
        con = [effective_cf(f) for f in conflict] + [p.cf for p in proofs if p.args != fact.args]
        support, against = combine_all(pro), combine_all(con)
        net = combine(support, -against) if pro and con else support if pro else -against
        rule_ids = [r for p in proofs for r in p.rule_ids]
        rule_ids = list(dict.fromkeys(rule_ids))
        trace = {"claim": fact.to_dict(), "support_cf": round(support, 4), "against_cf": round(against, 4),
                 "claim_cf": round(net, 4), "supporting": [f.to_dict() for f in match],
                 "conflicting": [f.to_dict() for f in conflict], "proofs": [how_json(p) for p in proofs]}
        lines = list(notes)    # which evidence took precedence, and why
        for f in match:
            lines.append(f"evidence {f} from {f.provenance.describe()} agrees (CF {effective_cf(f):.2f})")
        for f in conflict:
            lines.append(f"evidence {f} from {f.provenance.describe()} disagrees (CF {effective_cf(f):.2f})")
        for p in proofs:
            lines.append(("proved " if p.args == fact.args else "proved instead ") + how_text(p))
        if pro and con:
            lines.append(f"combined: for {support:.2f}, against {against:.2f} -> {net:.2f}")
        if net > THRESHOLD:
            verdict, cf = "supported", net
        elif net < -THRESHOLD:
            verdict, cf = "contradicted", -net
        else:
            verdict, cf = "unsupported", 1.0 - abs(net)
            if len(lines) == len(notes):
                lines.append(f"no evidence mentions {fact.relation} for {', '.join(map(str, fact.args[:-1] or fact.args))}")
            else:
                lines.append(f"the evidence is too weak or conflicting (CF {net:.2f}, needs more than {THRESHOLD})")
        return ClaimVerdict(claim, verdict, cf, rule_ids, "\n".join(lines), trace)

    @staticmethod
    def _violation(claim: Claim, hits: list[Violation]) -> ClaimVerdict:
        cf = combine_all([v.cf for v in hits])
        text = "\n".join(f"rule {v.rule_id} \"{v.rule_message}\": {v.message} (CF {v.cf:.2f}; matched "
                         f"{', '.join(map(str, v.facts))})" for v in hits)
        trace = {"claim": claim.fact.to_dict(), "violations": [v.to_dict() for v in hits]}
        return ClaimVerdict(claim, "violates_rule", cf, list(dict.fromkeys(v.rule_id for v in hits)), text, trace)
