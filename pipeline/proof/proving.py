"""Symbolic answers: when a question parses into a rule-base relation with one open argument, backward
chaining over the evidence facts proves that argument (with a certainty factor and the documents it rests
on); the model only phrases it, and where the model's answer disagrees the proof wins."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol, Sequence

from pipeline.lang import word_pattern
from pipeline.question.answer_types import SITUATION, TOTAL_WORDS, asking_clause, asks_two
from pipeline.question.focus import Goal, QuestionFocus
from pipeline.question.naming import relation_names
from pipeline.seams import PassageLike
from pipeline.text.periods import period_spans, periods
from pipeline.text.sentences import blanked, sentences
from pipeline.text.terms import phrase_span, says_phrase
from pipeline.text.values import find_values
from symbolic import BackwardChainer, Fact, Node, Provenance, RuleBase
from symbolic.cf import THRESHOLD
from symbolic.explain import how_text
from symbolic.model import RelationSig, Var
from symbolic.values import format_value

# The runner-up value must trail the proved one by this much CF, else the evidence is ambiguous (two
# current documents disagree, or the question leaves out a qualifier the documents distinguish).
MARGIN = 0.3


@dataclass
class ProvenAnswer:
    goal: Goal
    value: Any
    cf: float
    node: Node
    documents: list[Fact]                 # the document facts the proof rests on (doc id, span)
    rivals: list[tuple[Any, float]] = field(default_factory=list)

    @property
    def fact(self) -> Fact:
        return Fact(self.goal.relation, (*self.goal.args, self.value), self.cf, Provenance("proof"))

    @property
    def how(self) -> str:
        return how_text(self.node)

    def to_dict(self) -> dict:
        return {"relation": self.goal.relation, "args": [format_value(a) for a in self.goal.args],
                "value": format_value(self.value), "cf": round(self.cf, 4), "rule_ids": self.node.rule_ids,
                "documents": [{"doc_id": f.provenance.doc_id, "start": f.provenance.start, "end": f.provenance.end,
                               "superseded": bool(f.provenance.superseded)} for f in self.documents],
                "rivals": [{"value": format_value(v), "cf": round(c, 4)} for v, c in self.rivals],
                "how": self.how}


# Counts written as words ("three nights", "two trucks"); "one" is left out: "on one battery charge" asks
# for no computation (lang/<code>/proof.toml count_words).
COUNT_WORDS = re.compile(word_pattern("proof.count_words"), re.IGNORECASE)


def asks_a_computation(question: str, focus: QuestionFocus, goal: Goal | None = None) -> bool:
    """A question that states a value or count of its own ("a 3-day trip", "with 3 years of service",
    "three nights", "300 kg") qualifies or computes beyond the bare relation, and one that asks two things
    (a Chinese "... is who? ... is how much?") needs both: a single lookup proof would answer another question.
    A ``goal`` that binds the question's values as its arguments (a rule computes a stay's cost from "4 nights")
    answers it."""
    return states_a_value(question, focus, goal) or asks_two(question)


def states_a_value(question: str, focus: QuestionFocus, goal: Goal | None = None) -> bool:
    """The question states a value or count of its own that ``goal`` (if given) does not bind: its answer may
    state what is computed from it ("so the fuel surcharge is EUR 112"), which no document relation holds."""
    # "Tier 1", "AX-200": names, not values; the values the goal binds are its arguments
    unnamed = blanked(question, [*((e.start, e.end) for e in focus.entities), *(goal.stated if goal else ()),
                                 *period_spans(question), *focus.name_spans, *_told_before(question, goal),
                                 *_asserted_before(question, focus, goal)])
    return bool(find_values(unnamed)) or bool(COUNT_WORDS.search(unnamed))


def _asserted_before(question: str, focus: QuestionFocus, goal: Goal | None) -> list[tuple[int, int]]:
    """The clauses before the asking one, where that clause asks an amount per period and no goal computes
    with a value: a Chinese "the Chengdu depot's heat allowance is paid all twelve months of the year; how much is
    it a month?" asks the monthly allowance, and the twelve months before it are what the asker takes the
    documents to say, not a count to multiply it by. Not where the clauses before are the asker's own case ("I
    work 22 days this month") or the question counts or totals."""
    if goal is None or any(g.stated for g in focus.goals):
        return []
    start, _end = asking_clause(question)
    if not start or not periods(question[start:]) or find_values(question[start:]) \
            or SITUATION.search(question[:start]) or COUNT_WORDS.search(question) or TOTAL_WORDS.search(question):
        return []
    return [(0, start)]


def _told_before(question: str, goal: Goal | None) -> list[tuple[int, int]]:
    """The sentences before the asking one, where ``goal`` binds values of the asking sentence and none of
    them: "I ride to work and back on five weekdays… How much do those 10 rides cost?" tells how the asker
    came to the count the goal binds."""
    spans = sentences(question)
    if goal is None or not goal.stated or len(spans) < 2:
        return []
    ask = spans[-1][0]
    return [(0, ask)] if all(s >= ask for s, _e in goal.stated) else []


def _proved(chainer: BackwardChainer, goal: Goal) -> list[Node]:
    """The proofs of ``goal``'s open argument above the CF threshold, best first."""
    return [n for n in chainer.prove(goal.relation, (*goal.args, Var("answer"))) if n.cf > THRESHOLD]


def _unambiguous(goal: Goal, nodes: list[Node], margin: float) -> ProvenAnswer | None:
    best, rest = nodes[0], nodes[1:]
    if rest and rest[0].cf > best.cf - margin:
        return None
    docs = [f for f in best.facts if f.provenance.source == "document"]
    return ProvenAnswer(goal, best.args[-1], best.cf, best, docs, [(n.args[-1], n.cf) for n in rest])


def best_proof(chainer: BackwardChainer, goal: Goal, margin: float = MARGIN) -> ProvenAnswer | None:
    """The value of ``goal``'s open argument that ``chainer`` proves best, or None: nothing proved above
    the CF threshold, or a runner-up within ``margin`` of it."""
    nodes = _proved(chainer, goal)
    return _unambiguous(goal, nodes, margin) if nodes else None


def _names_used(goal: Goal, focus: QuestionFocus) -> int:
    """The entities and values the question states that ``goal`` binds."""
    named = focus.entity_ids
    return len(goal.stated) + sum(1 for i, a in enumerate(goal.args)
                                  if i not in goal.implied and isinstance(a, str) and a in named)


def _said_span(sig: RelationSig, question: str) -> tuple[int, int] | None:
    """Where ``question`` says the longest of the relation's names whole."""
    text = " ".join(question.split())
    spans = [span for n in relation_names(sig) if n.strip() if (span := phrase_span(text, " ".join(n.split())))]
    return max(spans, key=lambda s: s[1] - s[0]) if spans else None


def _longest_said(goals: list[Goal], question: str, rulebase: RuleBase) -> list[Goal]:
    """The goals whose name the question says, less those said only inside another's longer name: "the escape of
    water excess" asks the escape-of-water excess, not the "excess" its words hold (a relation of another
    attribute, which answered for it where the longer one proved nothing)."""
    spans = [(g, _said_span(rulebase.relations[g.relation], question)) for g in goals]

    def inside(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
        return a is not None and b is not None and b[0] <= a[0] and a[1] <= b[1] and a != b
    return [g for g, span in spans if not any(inside(span, other) for h, other in spans if h is not g)]


def _phrased(sig: RelationSig, question: str) -> bool:
    """One of the relation's names appears whole in ``question``, its words together."""
    text = " ".join(question.split())
    return any(says_phrase(text, " ".join(n.split())) for n in relation_names(sig))


def current_evidence(evidence: Sequence[Fact], rulebase: RuleBase) -> list[Fact]:
    """The evidence a proof may rest on: a superseded document's fact about a subject that a current document
    also states is left out (current over superseded), so a total is never mixed from old and new rates."""
    current = {(f.relation, f.args[:-1]) for f in evidence
               if f.provenance.source == "document" and not f.provenance.superseded}
    out = []
    for f in evidence:
        sig = rulebase.relations.get(f.relation)
        if f.provenance.superseded and sig is not None and sig.functional and (f.relation, f.args[:-1]) in current:
            continue
        out.append(f)
    return out


def prove(focus: QuestionFocus, rulebase: RuleBase, evidence: Sequence[Fact], *, max_depth: int = 20,
          margin: float = MARGIN, off_question: Callable[[ProvenAnswer], bool] | None = None) -> ProvenAnswer | None:
    """The proved answer to the best-named goals of ``focus``, or None: no goal, a question with values
    of its own that no goal binds, nothing proved above the CF threshold, or an ambiguous proof (runner-up within
    ``margin``, or two equally named relations proving different values). A proof ``off_question`` rejects
    (a rate per hour to a question per week) answers nothing, and leaves the field to its rivals."""
    goals = [g for g in focus.goals if not asks_a_computation(focus.question, focus, g)]
    if not goals:
        return None
    top = goals[0].score
    chainer = BackwardChainer(rulebase.backward_rules, [*current_evidence(evidence, rulebase), *rulebase.facts],
                              max_depth=max_depth)
    found: list[ProvenAnswer] = []
    best = [g for g in goals if g.score == top]
    # among equally named relations, those using the most of what the question names: "10 AX-200 robots …
    # after the volume discount" asks the order's price, not the discount alone
    most = max(_names_used(g, focus) for g in best)
    best = [g for g in best if _names_used(g, focus) == most]
    # and those the question names as a phrase: "the battery warranty on the robot" asks the battery warranty,
    # though "robot" and "warranty" make the robot warranty's name too
    phrased = _longest_said([g for g in best if _phrased(rulebase.relations[g.relation], focus.question)],
                            focus.question, rulebase)
    for goal in phrased or best:
        nodes = _proved(chainer, goal)
        if not nodes:
            continue
        proof = _unambiguous(goal, nodes, margin)
        if proof is None:
            return None
        if off_question is None or not off_question(proof):
            found.append(proof)
    if not found or any(p.value != found[0].value for p in found[1:]):
        return None
    return max(found, key=lambda p: p.cf)


class _PassageSource(Protocol):
    """The chunk passage a document fact was read from (pipeline.evidence.kb_facts.KBFacts)."""
    def passage_for(self, fact: Fact) -> PassageLike | None: ...


def value_places(proof: ProvenAnswer, passages: Sequence[PassageLike],
                 kb: _PassageSource | None = None) -> Iterator[tuple[PassageLike, int, int]]:
    """Where the proved value stands in the spans of the document facts the proof rests on: (passage, start,
    end) in the passage's text, the passage being ``kb``'s chunk of the fact (pipeline.evidence.kb_facts.KBFacts) or
    else the first of ``passages`` that holds the span."""
    for f in proof.documents:
        prov = f.provenance
        holder = kb.passage_for(f) if kb is not None else None
        holder = holder or next((p for p in passages if p.doc_id == prov.doc_id
                                 and p.start <= (prov.start or 0) and (prov.end or 0) <= p.end), None)
        if holder is None or prov.start is None or prov.end is None:
            continue
        at = prov.start - holder.start
        for value, _kind, s, e in find_values(holder.text[at:prov.end - holder.start]):
            if value == proof.value:
                yield holder, at + s, at + e


def stated_value(proof: ProvenAnswer, passages: Sequence[PassageLike]) -> str | None:
    """The proved value as a source writes it ("EUR 0.35", "16 characters", a Chinese "12 days"), read from the span of
    a document fact the proof rests on; None when no shown passage holds one."""
    return next((p.text[s:e] for p, s, e in value_places(proof, passages)), None)
