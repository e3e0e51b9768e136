"""The condition a question's measure runs up to: "how long may they drive before they must take a break?" asks
how long of "drive"; "before they must take a break" bounds it. A value a source gives the condition (the break's
30 minutes) does not answer, and an answer need not repeat the condition's words. English only: a Chinese
question has no condition clause here."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from pipeline.lang import alternation
from pipeline.question.answer_types import asking_clause
from pipeline.text.terms import content_terms, found_in
from pipeline.text.values import find_values

# The measure and its verb complete before the conjunction: "how long may they drive | before …", "what is the
# longest time an operator may drive | before …". "How many days after the trip must the report be filed?" puts
# its auxiliary after the conjunction: "after the trip" is part of the measure, not a condition
# (lang/<code>/question.toml measure_asks, auxiliaries, bounding_words).
_MEASURED_THEN_BOUNDED = re.compile(
    rf"\b(?:{alternation('question.measure_asks')})\b[^?.;]*?"
    rf"\b(?:{alternation('question.auxiliaries')})\b(?P<main>[^?.;]*?)"
    rf"\b(?:{alternation('question.bounding_words')})\b(?P<condition>[^?.;]*)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


@dataclass(frozen=True)
class Condition:
    asked: frozenset[str]       # the topic terms of what is measured ("drive")
    bound: frozenset[str]       # the topic terms only the condition says ("break", "take")


def condition_of(question: str, topics: set[str]) -> Condition | None:
    """The condition the asking clause of ``question`` bounds its measure by, as ``topics`` (the question's topic
    terms) split between the measure and the condition; None when there is none, or when the measure's own part
    holds none of the topics (then the condition is what is asked about)."""
    start, end = asking_clause(question)
    clause = question[start:end]
    if not clause.isascii():
        return None
    m = _MEASURED_THEN_BOUNDED.search(clause)
    if m is None:
        return None
    asked = found_in(topics, content_terms(clause[:m.start("condition")]))
    bound = found_in(topics, content_terms(m.group("condition"))) - asked
    if not asked or not bound:
        return None
    return Condition(frozenset(asked), frozenset(bound))


# A value that measures the word before it ("a break of at least 30 minutes", "Longest continuous driving 4.5
# hours", "the break lasts 30 minutes") or after it ("a 30-minute break"); "replaced every 36 months" gives an
# interval, not the replacement's length (lang/<code>/question.toml measure_links, measure_bounds).
_MEASURE_AFTER = re.compile(
    rf"\s*(?:[:|]\s*)?(?:(?:{alternation('question.measure_links')})\s+)*"
    rf"(?:(?:{alternation('question.measure_bounds')})\s+)?", re.IGNORECASE)
_MEASURE_BEFORE = re.compile(r"[\s-]?")


def needed_topics(topics: set[str], condition: Condition | None, used: set[str]) -> set[str]:
    """The topic terms a statement using ``used`` must be measured against: the condition's words count where it
    uses them ("First class is allowed for a rail journey of more than 2 hours" to "How long must a train journey
    be before I may travel first class?") and are not missed where it does not ("Longest continuous driving 4.5
    hours" to "how long may they drive before they must take a break?")."""
    return topics if condition is None else topics - (condition.bound - used)


def measures_the_condition(text: str, condition: Condition, values: Iterable[object]) -> bool:
    """Whether ``text`` gives each of ``values`` it states as the measure of a word of the condition and of no word
    of what is asked: "a break of at least 30 minutes" is the break's length, not the driving time. False when it
    states none of them, or one of them measures anything else or nothing."""
    wanted = list(values)
    topics = set(condition.asked | condition.bound)
    words = [(w.start(), w.end(), found_in(topics, content_terms(w.group(0)))) for w in _WORD.finditer(text)]
    measured = []
    for v, _kind, vs, ve in find_values(text):
        if not any(v == w for w in wanted):
            continue
        of: set[str] = set()
        before = next(((we, terms) for _ws, we, terms in reversed(words) if we <= vs and terms), None)
        if before is not None and _MEASURE_AFTER.fullmatch(text, before[0], vs):
            of |= before[1]
        after = next(((ws, terms) for ws, _we, terms in words if ws >= ve), None)
        if after is not None and _MEASURE_BEFORE.fullmatch(text, ve, after[0]):
            of |= after[1]
        measured.append(bool(of & condition.bound) and not of & condition.asked)
    return bool(measured) and all(measured)
