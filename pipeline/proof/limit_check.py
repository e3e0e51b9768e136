"""Limit checks: a yes/no question that puts a value of its own to a limit the rules prove. "Can I book a
EUR 220 per night hotel in Munich?" states EUR 220; the rules prove the hotel limit for Munich is EUR 180,
so the answer is "no". A value within the limit proves nothing: a "yes" needs every condition the
documents set, and a limit is only one of them (English and Chinese cues; other languages check nothing)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from pipeline.lang import Lexicon, alternation, phrase, words
from pipeline.proof.every_binding import every_binding
from pipeline.proof.limits import limit_direction, limit_over, refuted
from pipeline.proof.proving import MARGIN, ProvenAnswer, best_proof, current_evidence
from pipeline.question.focus import Goal, QuestionFocus, param_fits, parse_question, relation_label, stated_values
from pipeline.question.naming import relation_score
from pipeline.seams import PassageLike
from pipeline.text.citations import mask_citations
from pipeline.text.script import is_chinese
from pipeline.text.sentences import last_sentence, sentences
from symbolic import BackwardChainer, Claim, Fact, RuleBase
from symbolic.dependencies import derived_from, kin
from symbolic.values import Value, format_value, parse_value, value_type

# The relations a stated value can be must trail the best-named one by more than this share of their names,
# or the value may be about one of them ("a total discount of 14 %" names the representative's 3 % maximum
# (0.75) and the order's volume discount (0.67) alike). "a flight … of 5 hours" keeps the business class
# minimum (0.8) against flight booking in advance (0.33).
RIVAL_MARGIN = 0.3
# The least of a relation's name the question must use: one word of "hotel limit in a city" (the city is
# the question's entity; types and the bound arguments narrow the rest).
MIN_SCORE = 0.3

# The question asks whether something is allowed ("Can I …", "Is … acceptable", a Chinese "may … ?"). One that
# asks whether something is needed, refused or too much ("Do I need approval", "Is it too short", a Chinese
# "need … ?") turns "no" around, so it is checked not at all (lang/<code>/proof.toml permission, turned).
_PERMISSION_EN = re.compile(rf"^\W*(?:{'|'.join(Lexicon.load('en').words('proof.permission'))})\b.*[?]\s*$",
                            re.IGNORECASE)
_PERMISSION_ZH = re.compile("|".join(Lexicon.load("zh").words("proof.permission")))
_TURNED = re.compile(alternation("proof.turned"), re.IGNORECASE)


# How an answer says yes (at its start) and no (anywhere: "Unfortunately not", a Chinese "may not", "only with
# approval").
_YES = re.compile(rf"^\W*(?:{alternation('proof.says_yes')})", re.IGNORECASE)
_NO = re.compile(alternation("proof.says_no"), re.IGNORECASE)


@dataclass
class LimitBreach:
    """A value the question states, past the limit the rules prove for it."""
    stated: Value
    span: tuple[int, int]                  # where the question states it
    direction: str                         # "upper" (a maximum) or "lower" (a minimum)
    proof: ProvenAnswer                    # the limit
    passages: list[PassageLike] = field(default_factory=list)   # the chunks stating the proof's facts
    covered_by: ProvenAnswer | None = None  # the lowest limit that covers the value (pipeline.proof.approver)
    cover_passages: list[PassageLike] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = {"stated": format_value(self.stated), "direction": self.direction, "proved": self.proof.to_dict()}
        if self.covered_by is not None:
            out["covered_by"] = self.covered_by.to_dict()
        return out


def asks_permission(question: str) -> bool:
    """The question's last sentence asks whether something is allowed, with no word that turns the answer
    around (need, too, exceed, not, their Chinese words, …)."""
    last = last_sentence(question)
    if not last:
        return False
    return not _TURNED.search(last) and (_PERMISSION_ZH if is_chinese(last) else _PERMISSION_EN).search(last) is not None


def _value_types(value: object) -> frozenset[str]:
    kind = value_type(value)
    return frozenset({kind, "quantity"} if kind == "number" else {kind})


def _candidates(focus: QuestionFocus, rulebase: RuleBase, value: Value, span: tuple[int, int],
                implied: Mapping[tuple[str, int], str] | None = None) -> list[Goal]:
    """The goals whose value ``value`` can be: the relation's value fits it, every other argument is bound
    (by the question's entities or another of its values, never this one, or ``implied`` by the facts), best
    named first."""
    sents = sentences(focus.question)
    if len(sents) > 1 and span[1] <= sents[-1][0]:
        # a value the scene states, put to the test by the asking sentence ("I have 8 unused days of annual leave
        # … Can I carry all of them over?" asks the carry-over limit, not the leave): the relation the asking
        # sentence names comes first, if it is a limit
        asking = focus.question[sents[-1][0]:sents[-1][1]]
        named = [g for g in _fitting_goals(asking, focus, rulebase, value, implied) if not g.stated]
        if _limit_goal(named, rulebase) is not None:
            return named
    named = [g for g in _fitting_goals(focus.question, focus, rulebase, value, implied) if span not in g.stated]
    return named or _fitting(focus, rulebase, value, span)


def _fitting_goals(text: str, focus: QuestionFocus, rulebase: RuleBase, value: Value,
                   implied: Mapping[tuple[str, int], str] | None) -> list[Goal]:
    """The goals ``text`` (the question or its asking sentence) names, with ``focus``'s entities, whose value
    ``value`` fits."""
    parsed = parse_question(text, rulebase, min_score=MIN_SCORE, described=focus.entities, types=_value_types(value),
                            implied=implied)
    # among equally named relations, the one taking the question's other values first: "a EUR 800 hotel stay for
    # 4 nights in Paris" is put to the stay's limit for 4 nights, not to the nightly limit of Paris's tier
    return sorted((g for g in parsed.goals if param_fits(rulebase.relations[g.relation].params[-1], value)),
                  key=lambda g: (-g.score, -len(g.stated)))


def _fitting(focus: QuestionFocus, rulebase: RuleBase, value: Value, span: tuple[int, int]) -> list[Goal]:
    """The one relation the question's entities and value fit, though it names none: "My cryogen handling
    training at Glasgow was 30 months ago" names a course and a campus and states a period, and one relation
    takes a course and a campus to a period. Its arguments but the value are the entities the question names,
    every one of them (none implied, none another of its values), and they are two at least: one place alone
    fits any of its thresholds ("I was at Glasgow 30 months ago" is no fume cupboard's test interval)."""
    parsed = parse_question(focus.question, rulebase, min_score=0.0, described=focus.entities,
                            types=_value_types(value))
    named = {e.entity_id for e in parsed.entities}
    if len(named) < 2:
        return []
    fits = [g for g in parsed.goals if not g.implied and not g.stated and set(g.args) == named
            and param_fits(rulebase.relations[g.relation].params[-1], value)]
    return fits if len({g.relation for g in fits}) == 1 else []


def _limit_goal(goals: list[Goal], rulebase: RuleBase) -> tuple[Goal, str] | None:
    """The one limit a stated value is put to: the best-named relation, a limit, with one binding, and no
    relation named within RIVAL_MARGIN of it that is not a limit the same way."""
    if not goals:
        return None
    top = goals[0]
    direction = limit_direction(rulebase.relations[top.relation])
    if direction is None:
        return None
    same = [g for g in goals if g.relation == top.relation]
    if len(same) > 1:
        return None          # two cities, two products: which one the value is about is not known
    for g in goals:
        if g.relation != top.relation and g.score >= top.score - RIVAL_MARGIN \
                and limit_direction(rulebase.relations[g.relation]) != direction:
            return None
    return top, direction


# The words before a number that make it a year ("March 2025", "in 2024"; lang/<code>/proof.toml year_before).
_YEAR = re.compile(rf"(?:\b(?:{alternation('proof.year_before')})\s+)$", re.IGNORECASE)
# The words after a number that make it a year (a Chinese "year").
_YEAR_AFTER = words("proof.year_after")


def _a_year(question: str, s: int, e: int) -> bool:
    """"March 2025", "in 2024", a Chinese "2025 year": a year, not a count."""
    text = question[s:e].strip()
    return bool(re.fullmatch(r"(?:19|20|21)\d\d", text)) and (
        _YEAR.search(question[:s]) is not None or question[e:].lstrip().startswith(_YEAR_AFTER))


# A count whose unit comes a word or two later: "8 unused days", "3 full days", "2 remaining weeks".
_QUALIFIED_UNIT = re.compile(rf"\s+(?:[A-Za-z-]+\s+){{1,2}}?(?P<unit>(?:{alternation('proof.qualified_units')})s?)\b",
                             re.IGNORECASE)


def _with_unit(question: str, value: Value, s: int, e: int) -> tuple[Value, int, int]:
    """A bare number of ``question`` read with the time unit one or two words after it ("I have 8 unused days
    … Can I carry them over?" states 8 days, not the count 8), its span reaching the unit; else as it is."""
    m = _QUALIFIED_UNIT.match(question, e) if value_type(value) == "number" else None
    if m is None:
        return value, s, e
    try:
        return parse_value(f"{question[s:e]} {m.group('unit')}"), s, m.end()
    except ValueError:
        return value, s, e


def _past(value: Value, limit: Value, direction: str) -> bool:
    try:
        return bool(value > limit) if direction == "upper" else bool(value < limit)
    except (TypeError, ValueError):   # another currency or dimension: not comparable, so no breach
        return False


def breached_limits(focus: QuestionFocus, rulebase: RuleBase, evidence: Sequence[Fact], *, max_depth: int = 20,
                    margin: float = MARGIN, implied: Mapping[tuple[str, int], str] | None = None) -> list[LimitBreach]:
    """Each value a permission question states that is past the limit the rules prove, unambiguously,
    for it (empty for any other question); ``implied``: pipeline.evidence.kb_facts.implied_arguments."""
    if not asks_permission(focus.question):
        return []
    chainer: BackwardChainer | None = None

    def chain() -> BackwardChainer:
        nonlocal chainer
        if chainer is None:
            # as for a symbolic answer, a superseded document's limit never stands beside the current one
            chainer = BackwardChainer(rulebase.backward_rules, [*current_evidence(evidence, rulebase), *rulebase.facts],
                                      max_depth=max_depth)
        return chainer

    out: list[LimitBreach] = []
    values = [_with_unit(focus.question, v, s, e)
              for v, s, e in stated_values(focus.question, focus.entities, focus.name_spans)]
    # the asking sentence's values first: an earlier sentence's may be hearsay about another case ("a colleague
    # says HG7 staff may approve up to GBP 10,000. Can Dr Nair approve GBP 6,200?"), and one limit is put once
    asking = (sentences(focus.question) or [(0, 0)])[-1][0]
    for value, s, e in sorted(values, key=lambda v: v[1] < asking):
        goals = _candidates(focus, rulebase, value, (s, e), implied)
        picked = _limit_goal(goals, rulebase)
        if picked is None and goals and refuted(chain(), goals[0], value):
            # "Can he approve GBP 20,000?" names a relation that checks the value given ("may approve"), and
            # its rules refute it: the one limit over the same arguments answers
            picked = limit_over(goals[0], value, rulebase)
        if picked is None and not goals:
            out += _past_every_binding(focus, rulebase, value, (s, e), evidence, chain(), margin, out)
            continue
        if picked is None:
            continue
        goal, direction = picked
        if names_another_limit(focus, rulebase, goal, value):
            continue
        # "EUR 300 for 2 nights": a count the limit does not take as an argument may scale the value (EUR 150
        # a night); one it takes ("the most a 4-night stay may cost") is part of the limit
        if any(value_type(v) == "number" and not _a_year(focus.question, vs, ve) and (vs, ve) not in goal.stated
               for v, vs, ve in values if vs != s):
            continue
        proof = best_proof(chain(), goal, margin)
        if proof is not None and _past(value, proof.value, direction) and all(b.proof.goal != goal for b in out):
            out.append(LimitBreach(value, (s, e), direction, proof))
    return out


# The least share of a rival limit's name the question must say for it to be the limit meant instead.
RIVAL_NAMED = 0.5


def names_another_limit(focus: QuestionFocus, rulebase: RuleBase, goal: Goal, value: Value) -> bool:
    """Whether the question names another limit that takes its ``value`` (kind and currency) better than the limit
    ``goal`` tests and the relations the rules derive it from: "Can Priya Raman approve emergency works costing GBP
    20,000?" puts the value to the emergency works limit, not to the commitment limit an approval rule checks
    (blind/05 con-02)."""
    terms = focus.relation_terms
    used = {goal.relation} | derived_from(rulebase, goal.relation)
    kind = rulebase.relations[goal.relation].params[-1].type
    limits = {r: sig for r, sig in rulebase.relations.items()
              if limit_direction(sig) is not None and sig.params and sig.params[-1].type == kind
              and (r in used or param_fits(sig.params[-1], value))}
    own = max((relation_score(limits[r], terms) for r in used if r in limits), default=0.0)
    return any(relation_score(sig, terms) >= max(RIVAL_NAMED, own + 1e-9)
               for r, sig in limits.items() if not kin(rulebase, r, goal.relation))


def _past_every_binding(focus: QuestionFocus, rulebase: RuleBase, value: Value, span: tuple[int, int],
                        evidence: Sequence[Fact], chainer: BackwardChainer, margin: float,
                        found: Sequence[LimitBreach]) -> list[LimitBreach]:
    """A breach per binding the question leaves open (pipeline.proof.every_binding: a threshold per campus, the
    campus unsaid) when the value is past the proved limit for every one of them: "no" holds whichever
    applies. Nothing when one binding has no proof or lets the value pass."""
    goals = every_binding(focus, rulebase, value, evidence, lambda sig: limit_direction(sig) is not None)
    if not goals or any(b.proof.goal in goals for b in found):
        return []
    direction = str(limit_direction(rulebase.relations[goals[0].relation]))
    out = []
    for goal in goals:
        proof = best_proof(chainer, goal, margin)
        if proof is None or not _past(value, proof.value, direction):
            return []
        out.append(LimitBreach(value, span, direction, proof))
    return out


def breach_gap(answer: str, claims: Sequence[Claim], breaches: Sequence[LimitBreach], rulebase: RuleBase) -> str | None:
    """None when ``answer`` says no and states each breached limit as that limit (a claim read from it of the
    limit's relation and value); otherwise what it must say. Stating the limit alone leaves the asker to
    compare, and the bare figure may be said of something else ("the manager approves within 30 days" for a
    30-day submission deadline)."""
    if not breaches:
        return None
    text = mask_citations(answer)
    says_yes = _YES.match(text) is not None
    missing = [b for b in breaches if not any(c.fact.relation == b.proof.goal.relation and c.fact.args
                                              and c.fact.args[-1] == b.proof.value for c in claims)]
    if not says_yes and not missing and _NO.search(text):
        return None
    said = "; ".join(f"{format_value(b.stated)} is {'above' if b.direction == 'upper' else 'below'} the "
                     f"{relation_label(rulebase, b.proof.goal.relation)} of {format_value(b.proof.value)}"
                     for b in (missing or breaches))
    return f"the answer is no ({said}), and the answer " + ("says yes" if says_yes else "does not say so")


# What breach_words says, per language (lang/<code>/proof.toml breach_*).
_BREACH_WORDS = {code: {part: phrase(f"proof.breach_{part}", code)
                        for part in ("no", "above", "below", "above_each", "below_each")} for code in ("en", "zh")}


def breach_words(breach: LimitBreach, *, chinese: bool, several: bool = False) -> tuple[str, str]:
    """What a composed answer says before and after the limit's sentence: "No. " and ". The value in the
    question is above this limit." The asker's value is not repeated: an answer's values are claims about the
    documents, and beside a limit a reader takes it for one ("Tier 1) [1]; EUR 220" read as Tier 1's limit)."""
    said = _BREACH_WORDS["zh" if chinese else "en"]
    return said["no"], said[("above" if breach.direction == "upper" else "below") + ("_each" if several else "")]
