"""Premises a question states that the rules disprove: "Why does the AX-200 carry 300 kg?" states
payload(ax_200, 300 kg), the documents' facts prove 200 kg, so the answer must say the premise is wrong
before anything else (English and Chinese cues; other languages read no premise)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from pipeline.lang import alternation
from pipeline.proof.limits import within_limit
from pipeline.proof.proving import MARGIN, ProvenAnswer, best_proof
from pipeline.question.answer_types import SITUATION, asking_clause
from pipeline.question.focus import Goal, QuestionFocus, relation_label
from pipeline.readers.comparisons import contradicted, stated_comparison
from pipeline.readers.corrections import question_claims
from pipeline.seams import PassageLike
from pipeline.text.citations import mask_citations
from pipeline.text.sentences import blanked, last_sentence, sentence_at, sentences
from pipeline.text.values import find_values, states_value
from symbolic import BackwardChainer, Claim, Fact, Provenance, RuleBase
from symbolic.values import format_value

# A sentence asking yes or no puts its values to the test ("May I fly business class on a 5-hour
# flight?"): it asserts nothing, and a threshold it names is the asker's case, not a claim about the policy
# (lang/<code>/readers.toml yes_no: an English auxiliary opening it, a Chinese yes-no word or final particle).
_YES_NO = re.compile(alternation("readers.yes_no"), re.IGNORECASE)

# An answer that opens with "because" gives the right value as the reason for the wrong premise: "Why is marriage
# leave only 3 days?" answered "Because marriage leave is 10 days" takes the premise as true while stating what
# refutes it.
_GIVES_A_REASON = re.compile(rf"^\W*(?:{alternation('readers.reasons')})", re.IGNORECASE)


@dataclass
class PremiseCorrection:
    """A premise of the question and the proof of the value the documents give instead."""
    premise: Claim
    proof: ProvenAnswer
    passages: list[PassageLike] = field(default_factory=list)   # the chunks stating the proof's facts
    # a comparison the question states ("higher than"), where the premise is one side of it: the stated value is
    # then the other side's proved value, which this one's is said to pass
    compared: str | None = None

    @property
    def stated(self) -> object:
        return self.premise.fact.args[-1]

    @property
    def against(self) -> str:
        """What the proved value stands against: "not 300 kg", or, one side of a comparison, "against 25 km/h
        ('higher than' in the question)"."""
        if self.compared:
            return f"against {format_value(self.stated)} ({self.compared!r} in the question)"
        return f"not {format_value(self.stated)}"

    def to_dict(self) -> dict:
        return {"premise": self.premise.text, "relation": self.premise.fact.relation,
                "stated": format_value(self.stated), "against": self.against, "proved": self.proof.to_dict(),
                **({"compared": self.compared} if self.compared else {})}


def _asks_yes_no(question: str) -> bool:
    """Whether the question's last sentence asks yes or no (the earlier ones set the scene)."""
    last = last_sentence(question)
    return bool(last) and _YES_NO.search(last) is not None


def stated_premises(question: str, focus: QuestionFocus, rulebase: RuleBase) -> list[Claim]:
    """The relation claims ``question`` asserts as facts: none in a yes/no question, none in a sentence
    about the asker's own case or a supposition, and no value a goal takes as its input ("a site that runs
    only 3 robots" is the count a licence cost is computed for, not a minimum the asker asserts)."""
    if _asks_yes_no(question):
        return []
    sents = sentences(question)
    inputs = [a for g in focus.goals if g.stated for a in g.args]
    return [c for c in question_claims(question, focus, rulebase)
            if len(c.fact.args) >= 2 and not SITUATION.search(sentence_at(question, sents, c.start) or question)
            and c.fact.args[-1] not in inputs]


def disproved_premises(focus: QuestionFocus, rulebase: RuleBase, evidence: Sequence[Fact], *, max_depth: int = 20,
                       margin: float = MARGIN) -> list[PremiseCorrection]:
    """Each premise of ``focus.question`` whose relation the rules prove, unambiguously, to have another
    value for the same arguments."""
    premises = stated_premises(focus.question, focus, rulebase)
    if not premises:
        return []
    chainer = BackwardChainer(rulebase.backward_rules, [*evidence, *rulebase.facts], max_depth=max_depth)
    out: list[PremiseCorrection] = []
    for claim in premises:
        fact = claim.fact
        goal = Goal(fact.relation, tuple(fact.args[:-1]), 1.0)
        proof = best_proof(chainer, goal, margin)
        if proof is None or proof.value == fact.args[-1] or any(c.proof.goal == goal for c in out):
            continue
        sig = rulebase.relations.get(fact.relation)
        if sig is not None and within_limit(sig, fact.args[-1], proof.value, claim.text):
            continue        # "a 10-day trip" under a 45-day maximum: a case of the limit, not a wrong limit
        out.append(PremiseCorrection(claim, proof))
    return out


def disproved_comparison(focus: QuestionFocus, rulebase: RuleBase, evidence: Sequence[Fact], *,
                         max_depth: int = 20, margin: float = MARGIN) -> list[PremiseCorrection]:
    """Both sides of a comparison the question states, where the rules prove both and the values say the other way
    ("why is Hangzhou's limit higher than the UK stations'?" with 20 and 25 km/h): the one said to be greater first,
    each a correction whose stated value is the other side's; none for a yes/no question (it asserts nothing)."""
    comparison = stated_comparison(focus)
    if comparison is None or _asks_yes_no(focus.question):
        return []
    chainer = BackwardChainer(rulebase.backward_rules, [*evidence, *rulebase.facts], max_depth=max_depth)
    greater, lesser = best_proof(chainer, comparison.greater, margin), best_proof(chainer, comparison.lesser, margin)
    if greater is None or lesser is None or not contradicted(comparison, greater.value, lesser.value):
        return []

    def side(proof: ProvenAnswer, other: ProvenAnswer) -> PremiseCorrection:
        fact = Fact(proof.goal.relation, (*proof.goal.args, other.value), 1.0, Provenance("answer"))
        return PremiseCorrection(Claim(fact, comparison.said, 0, 0, extractor="correction"), proof,
                                 compared=comparison.said)
    return [side(greater, lesser), side(lesser, greater)]


def asked_beyond(focus: QuestionFocus, corrections: Sequence[PremiseCorrection]) -> QuestionFocus | None:
    """What a question with disproved premises asks besides them ("Now that HG7 staff may approve up to GBP
    10,000, what is the limit for HG8 staff?" asks HG8's limit): its goals other than the premises', with the
    premises' values taken out of the question (they are not values it computes with); None when nothing is
    left to ask."""
    premised = {(c.proof.goal.relation, c.proof.goal.args) for c in corrections}
    goals = [g for g in focus.goals if (g.relation, g.args) not in premised]
    if not corrections or not goals:
        return None
    stated = [c.stated for c in corrections]
    spans = [(s, e) for v, _k, s, e in find_values(focus.question) if v in stated]
    return replace(focus, question=blanked(focus.question, spans), goals=goals)


def rest_of_question(focus: QuestionFocus, corrections: Sequence[PremiseCorrection]) -> QuestionFocus | None:
    """What a question asks besides its disproved premises, when it asks that in a clause of its own after them
    ("Bus operators can work 12-hour shifts, so how long may they drive …?"): the asking clause, with the names
    the clauses before it say (whom "they" stands for), and the question's goals other than the premises'. None
    when no premise's value comes before the asking clause ("Why does the AX-200 carry 300 kg?" asks nothing
    besides its premise)."""
    start, _end = asking_clause(focus.question)
    stated = [c.stated for c in corrections]
    spans = [(s, e) for v, _k, s, e in find_values(focus.question) if v in stated]
    if not start or not spans or any(s >= start for s, _e in spans):
        return None
    # the words around the names before the asking clause are the premise's, not what the rest asks
    names = sorted((x.start, x.end) for x in focus.entities if x.end <= start)
    cuts = [0, *(p for span in names for p in span), start]
    premised = {(c.proof.goal.relation, c.proof.goal.args) for c in corrections}
    return replace(focus, question=blanked(focus.question, list(zip(cuts[::2], cuts[1::2]))),
                   goals=[g for g in focus.goals if (g.relation, g.args) not in premised])


def premise_gap(answer: str, values: Sequence[object], corrections: Sequence[PremiseCorrection],
                rulebase: RuleBase) -> str | None:
    """None when ``answer`` states the value each disproved premise should have; otherwise what it must say
    (``values``: the values its claims and mentions state)."""
    def wrong(premises: Sequence[PremiseCorrection]) -> str:
        said = "; ".join(f"{relation_label(rulebase, c.premise.fact.relation)} is {format_value(c.proof.value)}, "
                         f"{c.against}" for c in premises)
        return f"the question's premise is wrong ({said})"

    text = mask_citations(answer)
    missing = [c for c in corrections if not states_value(text, values, c.proof.value)]
    if missing:
        return wrong(missing) + ", and the answer does not say so"
    if corrections and _GIVES_A_REASON.match(text):
        return wrong(corrections) + ", and the answer gives the right value as the reason for it instead of saying so"
    return None

