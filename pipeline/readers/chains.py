"""Claims a sentence states through a rule's chain, no model: for a goal ``head(?a, ?v) if first(?a, ?b) and
second(?b, ?v)`` with ``first`` unique ("a city's limit is its tier's"), a sentence claiming two of the three
links claims the third: "Paris is a Tier 1 city with a limit of EUR 180 per night" states the tier's limit
and the city's. Likewise for a goal of more links: a sentence stating its conclusion and every link but the
one that gives the value states that one ("Chen Hao's limit is CNY 108,000 (grade: HG8; campus: Suzhou)"
states the HG8 limit at Suzhou). And a sentence stating every premise of a goal states its conclusion ("Jonah
Petrakis is grade CR4, whose limit in Marrow Bay is USD 6,000" states Jonah Petrakis's limit)."""
from __future__ import annotations

from collections import Counter
from typing import Sequence, cast

from pipeline.readers.focus import sentence_around, sentence_claim
from pipeline.readers.vocabulary import VOCABULARY_CLAIM_CF, best_named
from pipeline.text.terms import content_terms
from symbolic import Claim, RuleBase
from symbolic.model import Atom, BackwardRule, Var

NAMED_SECOND_MIN = 0.5


def chains(rulebase: RuleBase) -> list[tuple[str, str, str]]:
    """(head, first, second) relations of the rule base's two-link chains through a unique relation."""
    out = []
    for rule in rulebase.backward_rules:
        prem = cast("list[Atom]", rule.premises)     # read only once checked to be atoms
        if len(prem) != 2 or not all(isinstance(p, Atom) and len(p.args) == 2 for p in (rule.head, *prem)):
            continue
        if not all(isinstance(t, Var) for p in (rule.head, *prem) for t in p.args):
            continue
        (a, v), (a1, b), (b2, v2) = rule.head.args, prem[0].args, prem[1].args
        first = rulebase.relations.get(prem[0].relation)
        if first is not None and first.unique and a == a1 and b == b2 and v == v2 and len({a, b, v}) == 3:
            out.append((rule.head.relation, prem[0].relation, prem[1].relation))
    return out


def chain_claims(answer: str, claims: Sequence[Claim], rulebase: RuleBase) -> list[Claim]:
    """The third link of each chain whose other two a sentence's claims state, unless claimed already; the
    second link only where one chain alone concludes the head through the first."""
    out: list[Claim] = []
    have = {(c.fact.relation, c.fact.args) for c in claims}
    found_chains = chains(rulebase)
    # a head two chains conclude through one first link ("a city's limit is its tier's limit, or its tier's
    # cap") does not say which second link holds
    concluding = Counter((head, first) for head, first, _second in found_chains)
    sentence_of = {id(c): sentence_around(answer, c.start) for c in claims}
    for head, first, second in found_chains:
        for link in (c for c in claims if c.fact.relation == first):
            s, e = sentence_of[id(link)]
            subject, middle = link.fact.args
            for c in claims:
                if c is link or sentence_of[id(c)] != (s, e):
                    continue
                if c.fact.relation == head and c.fact.args[0] == subject and \
                        (concluding[head, first] == 1 or _named_second(answer[s:e], head, first, found_chains,
                                                                       rulebase) == second):
                    found = (second, (middle, c.fact.args[1]))
                elif c.fact.relation == second and c.fact.args[0] == middle:
                    found = (head, (subject, c.fact.args[1]))
                else:
                    continue
                if found not in have:
                    have.add(found)
                    out.append(sentence_claim(*found, answer, s, e, c.cited, "chain", VOCABULARY_CLAIM_CF))
    return out


def _named_second(sentence: str, head: str, first: str, found_chains: Sequence[tuple[str, str, str]],
                  rulebase: RuleBase) -> str | None:
    """Of the second links of chains concluding ``head`` through ``first``, the one the sentence names best
    (at least half its name, and no tie): "Paris is a Tier 1 city with a limit of EUR 180 per night" says the
    tier's limit per night, not the tier's cap."""
    sigs = [rulebase.relations[second] for h, f, second in found_chains if h == head and f == first]
    named = best_named(sigs, frozenset(content_terms(sentence)), NAMED_SECOND_MIN)
    return named.name if named is not None else None


def _value_premise(rule: BackwardRule, rulebase: RuleBase) -> int | None:
    """The position of the one premise that gives a goal's value, where every premise is a plain atom of
    variables, the others are of unique relations, and the value premise's arguments are all bound by the head
    or the others; None for any other rule."""
    prem = cast("list[Atom]", rule.premises)     # read only once checked to be atoms
    if len(prem) < 2 or not _plain_atoms([rule.head, *prem]):
        return None
    value = rule.head.args[-1]
    givers = [i for i, p in enumerate(prem) if value in p.args]
    if len(givers) != 1 or prem[givers[0]].args[-1] != value:
        return None
    others = [p for i, p in enumerate(prem) if i != givers[0]]
    sigs = [rulebase.relations.get(p.relation) for p in others]
    bound = set(rule.head.args) | {t for p in others for t in p.args}
    if not all(sig is not None and sig.unique for sig in sigs) or not set(prem[givers[0]].args) <= bound:
        return None
    return givers[0]


def _unify(atom: Atom, args: tuple, bindings: dict) -> dict | None:
    out = dict(bindings)
    for var, value in zip(atom.args, args):
        if var in out and out[var] != value:
            return None
        out[var] = value
    return out if len(atom.args) == len(args) else None


def _plain_atoms(atoms: Sequence[object]) -> bool:
    return all(isinstance(p, Atom) and all(isinstance(t, Var) for t in p.args) for p in atoms)


def _bind_each(premises: Sequence[Atom], said: Sequence[Claim], bindings: dict | None) -> dict | None:
    """``bindings`` extended by each premise in turn, each fitted by exactly one binding of the ``said`` claims of
    its relation; None where a premise fits none or two."""
    for p in premises:
        if bindings is None:
            return None
        fits = {tuple(b.items()) for c in said if c.fact.relation == p.relation
                for b in [_unify(p, c.fact.args, bindings)] if b is not None}
        bindings = dict(fits.pop()) if len(fits) == 1 else None
    return bindings


def goal_premise_claims(answer: str, claims: Sequence[Claim], rulebase: RuleBase) -> list[Claim]:
    """The premise giving a goal's value, read from a sentence claiming the goal's conclusion and its other
    premises, each by one claim; for heads one rule alone concludes (two rules through different premises do
    not say which holds)."""
    rules = [r for r in rulebase.backward_rules if r.premises]
    concluding = Counter(r.head.relation for r in rules)
    have = {(c.fact.relation, c.fact.args) for c in claims}
    sentence_of = {id(c): sentence_around(answer, c.start) for c in claims}
    out: list[Claim] = []
    for rule in rules:
        at = _value_premise(rule, rulebase) if concluding[rule.head.relation] == 1 else None
        if at is None:
            continue
        premises = cast("list[Atom]", rule.premises)   # plain atoms: _value_premise found the value's
        others = [p for i, p in enumerate(premises) if i != at]
        for head in (c for c in claims if c.fact.relation == rule.head.relation):
            span = sentence_of[id(head)]
            said = [c for c in claims if sentence_of[id(c)] == span]
            bindings = _bind_each(others, said, _unify(rule.head, head.fact.args, {}))
            if bindings is None:
                continue
            base = premises[at]
            found = (base.relation, tuple(bindings[v] for v in base.args))
            if found not in have:
                have.add(found)
                out.append(sentence_claim(*found, answer, *span, head.cited, "chain", VOCABULARY_CLAIM_CF))
    return out


def goal_conclusion_claims(answer: str, claims: Sequence[Claim], rulebase: RuleBase) -> list[Claim]:
    """The conclusion of a goal of two or more premises, plain atoms of variables, that one sentence's claims
    state each by one claim, unless that conclusion is claimed already."""
    have = {(c.fact.relation, c.fact.args) for c in claims}
    sentence_of = {id(c): sentence_around(answer, c.start) for c in claims}
    spans = sorted(set(sentence_of.values()))
    out: list[Claim] = []
    for rule in rulebase.backward_rules:
        if len(rule.premises) < 2 or not _plain_atoms([rule.head, *rule.premises]):
            continue
        premises = cast("list[Atom]", rule.premises)   # plain atoms: _plain_atoms
        if not set(rule.head.args) <= {t for p in premises for t in p.args}:
            continue
        for span in spans:
            said = [c for c in claims if sentence_of[id(c)] == span]
            bindings = _bind_each(premises, said, {})
            if bindings is None:
                continue
            found = (rule.head.relation, tuple(bindings[v] for v in rule.head.args))
            if found not in have and not any(c.fact.relation == found[0] and c.fact.args[:-1] == found[1][:-1]
                                             for c in said):
                have.add(found)
                cited = sorted({x for c in said for x in c.cited})
                out.append(sentence_claim(*found, answer, *span, cited, "chain", VOCABULARY_CLAIM_CF))
    return out
