"""What an answer to a computing question states: its total, read as the computing goal's claim, and the rates
beside it ("EUR 84, at EUR 0.35 per kilometre" to "How much is reimbursed for driving 240 km?" states the
mileage rate the total's goal multiplies). A value written as a rate ("per kilometre", "each", Chinese "each
night" before it, a percentage) is read as the one premise of that goal its type fits, about the entities the
goal binds, so the rules check the rates as well as the total."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation
from pipeline.proof.proving import asks_a_computation
from pipeline.question.focus import Goal, QuestionFocus
from pipeline.readers.focus import fits, mention_claim, names_fit, negated, sentence_around, sentence_claim
from pipeline.readers.vocabulary import best_named, clause_terms, value_clause
from pipeline.text.entities import find_entities
from pipeline.text.values import ValueMention, own_mentions
from symbolic import Claim, RuleBase
from symbolic import model as m
from symbolic.model import RelationSig
from symbolic.terms import compare
from symbolic.values import Percentage

# A value written as a rate: "EUR 0.35 per kilometre", "EUR 1,200 each", "EUR 180 a night" (lang/<code>/readers.toml
# rate_after, or a slash), Chinese "each night CNY 700" (rate_before: whole patterns ending at the value).
_RATE_AFTER = re.compile(rf"^\s*(?:{alternation('readers.rate_after')})\b|^\s*/\s*\w", re.IGNORECASE)
_RATE_BEFORE = re.compile(alternation("readers.rate_before"))
# A value's clause that says any word of one premise's name, and fewer of every other fitting premise's, names it:
# the candidates are the few premises of one computing goal, not the whole vocabulary (vocabulary_reading's 2/3)
MIN_PREMISE_SCORE = 0.01


def computing_goals(focus: QuestionFocus) -> list[Goal]:
    """The best-named goals that take every value the question states as arguments (none for a lookup)."""
    goals = [g for g in focus.goals if g.stated and not asks_a_computation(focus.question, focus, g)]
    return [g for g in goals if g.score == goals[0].score]


def total_claims(answer: str, mentions: Sequence[ValueMention], focus: QuestionFocus,
                 rulebase: RuleBase) -> list[tuple[Claim, ValueMention]]:
    """A question that states values of its own computes ("a 4-night stay in Paris"): the best-named goals that
    take those values as arguments read the total from the values no other reader placed, the largest
    fitting one (a total is at least each rate it multiplies or sums: "EUR 720: EUR 180 per night"), in a
    sentence naming the goal's entities or no other of their types. Never a value the question states or
    the answer negates."""
    goals = computing_goals(focus)
    if not goals:
        return []
    own = own_mentions(mentions, focus.question)
    out: list[tuple[Claim, ValueMention]] = []
    for goal in goals:
        sig = rulebase.relations.get(goal.relation)
        if sig is None:
            continue
        taken = {id(x) for _c, x in out}
        fitting = [x for x in own if id(x) not in taken and fits(sig, x.value)
                   and not negated(answer, x.start) and names_fit(
                       goal.args, sig, find_entities(answer[slice(*sentence_around(answer, x.start))], rulebase))]
        if fitting:
            best = fitting[0]
            for x in fitting[1:]:
                if compare(">", x.value, best.value):
                    best = x
            out.append((mention_claim(goal.relation, goal.args, best, answer, "focus", 1.0), best))
    return out


def _premises(goal: Goal, rulebase: RuleBase) -> list[tuple[RelationSig, tuple]]:
    """(relation signature, subject arguments) of each premise of the goal's rules whose subject the goal's
    arguments or the rule's constants fix."""
    out: list[tuple[RelationSig, tuple]] = []
    for rule in rulebase.backward_rules:
        if rule.head.relation != goal.relation:
            continue
        env = {h.name: a for h, a in zip(rule.head.args, goal.args) if isinstance(h, m.Var)}
        for prem in rule.premises:
            sig = rulebase.relations.get(prem.relation) if isinstance(prem, m.Atom) else None
            if sig is None or not isinstance(prem, m.Atom) or prem.relation == goal.relation:
                continue
            subject = []
            for a in prem.args[:-1]:
                if isinstance(a, m.Var) and a.name in env:
                    subject.append(env[a.name])
                elif isinstance(a, m.Const):
                    subject.append(a.value)
                else:
                    break
            else:
                if (sig, tuple(subject)) not in out:
                    out.append((sig, tuple(subject)))
    return out


def written_as_rate(answer: str, mention: ValueMention) -> bool:
    """Whether the answer writes the value as a rate or a share."""
    return isinstance(mention.value, Percentage) or bool(_RATE_AFTER.match(answer[mention.end:mention.end + 12])) \
        or bool(_RATE_BEFORE.search(answer[max(0, mention.start - 6):mention.start]))


def input_claims(answer: str, mentions: Sequence[ValueMention], focus: QuestionFocus,
                 rulebase: RuleBase) -> list[tuple[Claim, ValueMention]]:
    """Claims of the best-named computing goals' premises for the values no other reader placed:
    - a value whose own clause names one fitting premise better than the others (any word of its name will do
      among the few premises of one goal: "the EUR 250 travel fee" says "travel fee per on-site visit");
    - else a value written as a rate that exactly one premise fits by type;
    - else, once the others are read, the one premise of its type no other value took ("3 hours at EUR 95 per
      hour plus the EUR 250 travel fee": the fee's clause names its premise, so the hourly rate is the other).
    Never a value the question states or the answer negates."""
    candidates = [c for g in computing_goals(focus) for c in _premises(g, rulebase)]
    out: list[tuple[Claim, ValueMention]] = []
    pending: list[tuple[ValueMention, list[tuple[RelationSig, tuple]]]] = []
    for mention in own_mentions(mentions, focus.question):
        fitting = [(sig, subject) for sig, subject in candidates if fits(sig, mention.value)]
        if not fitting or negated(answer, mention.start):
            continue
        choice = _named_premise(answer, mention, fitting)
        if choice is None and written_as_rate(answer, mention):
            if len(fitting) > 1:
                pending.append((mention, fitting))
                continue
            choice = fitting[0]
        if choice is not None:
            out.append((_premise_claim(answer, mention, *choice), mention))
    read = {c.fact.relation for c, _m in out}
    for mention, fitting in pending:
        rest = [(sig, subject) for sig, subject in fitting if sig.name not in read]
        if len(rest) == 1:
            out.append((_premise_claim(answer, mention, *rest[0]), mention))
    return sorted(out, key=lambda p: p[1].start)


def _named_premise(answer: str, mention: ValueMention,
                   fitting: list[tuple[RelationSig, tuple]]) -> tuple[RelationSig, tuple] | None:
    """The fitting premise the value's own clause names best, when one relation does (with one subject)."""
    _s, _e, cs, ce = value_clause(answer, mention)
    sig = best_named(list({id(sig): sig for sig, _ in fitting}.values()),
                     clause_terms(answer, cs, mention.end, ce), MIN_PREMISE_SCORE)
    chosen = [(f_sig, subject) for f_sig, subject in fitting if f_sig is sig]
    return chosen[0] if len(chosen) == 1 else None


def _premise_claim(answer: str, mention: ValueMention, sig: RelationSig, subject: tuple) -> Claim:
    s, e = sentence_around(answer, mention.start)
    return sentence_claim(sig.name, (*subject, mention.value), answer, s, e, mention.cited, "focus", 1.0)
