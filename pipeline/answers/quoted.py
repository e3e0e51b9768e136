"""Quoted answers: where no draft verifies (the model said the documents do not say, or every draft failed)
and the rules prove nothing, the source sentence that states a value of the kind the question asks, in the
question's own words, is quoted with its citation. A quote is checked like any draft, so one that does not
answer is never delivered."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from pipeline.checks.answer_check import TOPIC_SHARE, topic_terms
from pipeline.checks.checking import Check
from pipeline.lang import alternation
from pipeline.proof.proving import COUNT_WORDS
from pipeline.question.answer_types import TOTAL_WORDS, VALUE_ANSWER_TYPES, asking_clause, asks_two
from pipeline.question.codes import asked_codes, names_other_codes
from pipeline.question.condition import condition_of, measures_the_condition, needed_topics
from pipeline.question.focus import QuestionFocus
from pipeline.seams import PassageLike
from pipeline.text.entities import find_entities
from pipeline.text.periods import period_spans
from pipeline.text.script import is_chinese
from pipeline.text.sentences import blanked, sentences
from pipeline.text.tables import column_at, is_separator, row_cells
from pipeline.text.terms import content_terms, found_in
from pipeline.text.values import find_values
from pipeline.types import Attempt
from symbolic import RuleBase
from symbolic.values import Value, value_type

# A question asking yes/no, a person or an entity is answered by what a sentence says, not by a value in
# it, and is not quoted.
_NOT_QUOTED = frozenset({"yesno", "person", "entity"})
# A quote is one sentence a reader takes in at a glance; a longer one is a paragraph with more in it than
# was asked.
MAX_QUOTE_CHARS = 280
# Quotes tried per question: the best only. A lesser one shares fewer of the rare words of the question, and
# the answer check (half its topic words) cannot tell it from an answer.
MAX_QUOTES = 1
# A quoted sentence states at most this many values of the asked kind: more is a list, and the question
# asked for one of them.
MAX_ASKED_VALUES = 2
# The share of the question's topic terms, each weighted by its rarity among the statements shown, a quote
# must use: a sentence sharing only the common words ("allowance", "per month") of a question whose rare word
# ("parental") no source says answers another question. Below the worded share for English, as a paraphrase
# ("keep": "kept") weighs like a word no source says; Chinese terms are character pairs, many spanning words.
WEIGHTED_NEED = {"en": 0.45, "zh": 0.25}
# A heading's or list item's own numbering ("4. Dead on arrival", "- Labour", a Chinese numeral and its comma:
# lang/<code>/answers.toml item_numbering): not its words. Markdown emphasis ("**Parts and spares**: within 7 days
# of delivery ..."): a reader of the answer sees the words, not the marks.
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")
_NUMBERING = re.compile(rf"^\s*(?:[-*•]\s+|\(?\d+(?:\.\d+)*[.)、]?\s+|{alternation('answers.item_numbering')})")


@dataclass(frozen=True)
class Quote:
    text: str          # the answer as delivered: "<heading>: <sentence> [n]"
    source: int        # n of the cited prompt source
    sentence: str      # what is quoted: a sentence of the source (its lines joined), or a table row read out
    share: float       # the share of the question's topic terms the quote uses, each weighted by its rarity


# "Which version does it need, and how long is it supported?": a second question joined by "and"
# (lang/<code>/answers.toml second_question).
_SECOND_ASK = re.compile(alternation("answers.second_question"), re.IGNORECASE)


def asked_kinds(focus: QuestionFocus, rulebase: RuleBase | None = None) -> frozenset[str]:
    """The kinds of value that answer the question: by its words ("how long": a duration), else by the value
    its goals' relations are declared to take ("What is the annual stipend …?" asks a money relation)."""
    if focus.answer_types:
        return focus.answer_types
    declared = {rulebase.relations[g.relation].params[-1].type for g in focus.goals
                if rulebase is not None and g.relation in rulebase.relations}
    return frozenset(declared & VALUE_ANSWER_TYPES) if len(declared) == 1 else frozenset()


def quotable(question: str, focus: QuestionFocus, rulebase: RuleBase | None = None) -> bool:
    """A question a single source statement can answer: it asks for a value of one kind, asks one thing, and
    asks no total and no count ("three nights"): those are computed from what sources state."""
    wanted = asked_kinds(focus, rulebase)
    return bool(wanted & VALUE_ANSWER_TYPES) and not wanted & _NOT_QUOTED and not asks_two(question) \
        and not _SECOND_ASK.search(question) and not TOTAL_WORDS.search(question) and not COUNT_WORDS.search(question)


def own_values(question: str, focus: QuestionFocus) -> list[Value]:
    """The values a question states of its own ("a Severity 2 ticket", "a 3-day trip"; not the names it says):
    a statement answers it only if it states them too, as the row of "Severity 2" does; "the per diem is EUR
    52" answers no question about a 3-day trip, whose total is computed from it."""
    unnamed = blanked(question, [*((e.start, e.end) for e in focus.entities), *period_spans(question)])
    return [v for v, *_ in find_values(unnamed)]


def names_another_entity(focus: QuestionFocus, text: str, rulebase: RuleBase | None) -> bool:
    """Whether ``text`` names entities of a type the question names, but none the question names: "up to 3
    days per week" of the Berlin policy is no answer about the Shenzhen office, nor the PhD row of a stipend
    table one about master's students. Codes no entity covers count alike: the AX-200 manual's "every 2,000
    operating hours" is no answer about the LX-500 with no domain rules loaded."""
    if names_other_codes(asked_codes(focus), text):
        return True
    asked = focus.ids_by_type
    if rulebase is None or not asked:
        return False
    named: dict[str, set[str]] = {}
    for e in find_entities(text, rulebase):
        named.setdefault(e.type, set()).add(e.entity_id)
    return any(named.get(t) and not named[t] & set(ids) for t, ids in asked.items())


def _whole(passage: PassageLike) -> str:
    """A passage's title, headings and text: where it says whom it is about."""
    return " ".join([getattr(passage, "title", None) or "", *(getattr(passage, "heading_path", None) or []),
                     passage.text])


def quotes(question: str, focus: QuestionFocus, passages: Sequence[PassageLike],
           rulebase: RuleBase | None = None) -> list[Quote]:
    """The sentences of ``passages`` (numbered [1].. as the prompt shows them) that could answer ``question``,
    best first: each states a value of the asked kind and uses at least the share of the question's topic
    terms a worded answer must use (see ``ranked_statements``)."""
    if not quotable(question, focus, rulebase):
        return []
    stated = own_values(question, focus)
    wanted = asked_kinds(focus, rulebase) & VALUE_ANSWER_TYPES

    def answers(sentence: str) -> bool:
        said = [v for v, *_ in find_values(sentence)]
        asked = [v for v in said if _kind_of(v) & wanted and not any(v == s for s in stated)]
        return all(any(v == s for s in said) for v in stated) and 0 < len(asked) <= MAX_ASKED_VALUES
    out: list[Quote] = []
    seen: set[str] = set()
    for q in ranked_statements(question, focus, passages, rulebase, answers):
        if q.sentence not in seen:       # a statement twice (two overlapping chunks): once, at its best rank
            seen.add(q.sentence)
            out.append(q)
    return out[:MAX_QUOTES]


def ranked_statements(question: str, focus: QuestionFocus, passages: Sequence[PassageLike], rulebase: RuleBase | None,
                      fits: Callable[[str], bool]) -> list[Quote]:
    """The statements of ``passages`` that ``fits`` accepts and that use at least the share of the question's
    topic terms a worded answer must use, counted and weighted by rarity among the statements shown (its
    section heading counts with it, and leads the quote where it adds terms the sentence lacks); best first."""
    topics = topic_terms(question, focus)
    if len(topics) < 2:      # one topic word cannot tell the sentences of a passage apart
        return []
    # "how long may they drive before they must take a break?": the break's words bound what is asked; a
    # statement need not use them (it counts those it uses), and one whose value is the break's answers another
    # question
    condition = condition_of(question, topics)
    stated = own_values(question, focus)
    # "Dr Wang Yu is to decant liquid nitrogen in the filling room; how long is his cryogenic liquid handling
    # training valid?" (in Chinese): the scene's words are not what is asked
    start, end = asking_clause(question)
    asking = topic_terms(question[start:end], focus) & topics if start else set()
    asked_names = {t for e in focus.entities for t in content_terms(e.text)}
    chinese = is_chinese(question)
    lang = "zh" if chinese else "en"
    need = TOPIC_SHARE[lang][0]
    found: list[tuple[tuple, Quote]] = []
    shown = [(n, at, sentence, _heading(passage)) for n, passage in enumerate(passages, 1)
             if not names_another_entity(focus, _whole(passage), rulebase)
             for at, sentence in statements(passage, topics | asked_names)
             if len(sentence) <= MAX_QUOTE_CHARS and is_chinese(sentence) == chinese]
    terms = [content_terms(sentence) | content_terms(heading) for _, _, sentence, heading in shown]
    # A topic term few statements use tells them apart ("raw" of "raw robot telemetry"): it weighs more.
    weight = {t: math.log(1 + len(shown) / (1 + sum(bool(found_in({t}, ts)) for ts in terms))) for t in topics}
    for (n, at, sentence, heading), with_heading in zip(shown, terms):
        if not fits(sentence) or names_another_entity(focus, f"{heading} {sentence}", rulebase):
            continue
        if condition is not None and measures_the_condition(
                sentence, condition, [v for v, *_ in find_values(sentence) if v not in stated]):
            continue
        own = found_in(topics, content_terms(sentence))
        used = found_in(topics, with_heading)
        needed = needed_topics(topics, condition, used)
        share = len(used) / len(needed)
        weighted = sum(weight[t] for t in used) / sum(weight[t] for t in needed)
        asked_here = asking & needed
        if share < need or weighted < WEIGHTED_NEED[lang] or not own or \
                (asked_here and len(found_in(asked_here, with_heading)) < need * len(asked_here)):
            continue
        lead = f"{heading}{'：' if chinese else ': '}" if heading and used - own else ""
        names = bool(asked_names and found_in(asked_names, content_terms(sentence)))
        found.append(((-weighted, not names, -len(own), n, at),
                      Quote(f"{lead}{sentence} [{n}]", n, sentence, weighted)))
    found.sort(key=lambda x: x[0])
    return [q for _, q in found]


def statements(passage: PassageLike, topics: set[str] | None = None) -> Iterator[tuple[int, str]]:
    """What a passage states, one statement at a time, with its offset: each prose sentence (its list marker
    dropped, its lines joined), and each table body row read out with its column headers ("Application
    documents of rejected candidates: Retention period 6 months; Starts at date of the rejection"); only the
    columns whose headers use the most of ``topics`` (the question's words and names) where some use any
    ("under Standard Support": not the Premium Support column)."""
    text = passage.text
    for s, e in sentences(text):
        line = text[s:e].strip()
        if not line or "|" in line or line.startswith("#"):
            continue
        said = _EMPHASIS.sub("", _NUMBERING.sub("", " ".join(line.split()))).rstrip(";；,，")
        if re.search(r"[^\W\d_]", said):       # not a list item's "3." split off on its own
            yield s, said
    at = 0
    for line in text.split("\n"):
        cells = row_cells(line)
        column = column_at(text, at + line.index("|", line.index("|") + 1) + 1, getattr(passage, "context_prefix", None)) \
            if len(cells) > 1 and not is_separator(line) else None
        if column is not None and len(column.headers) == len(cells) and cells[0]:
            uses = [len(found_in(topics or set(), content_terms(h))) if i else 0 for i, h in enumerate(column.headers)]
            named = [i for i, n in enumerate(uses) if n and n == max(uses)]
            kept = [i for i in range(1, len(cells)) if cells[i] and (not named or i in named)]
            # a two-column table's one header says nothing its row label does not, unless it uses the
            # question's words ("| Category | Basic allowance |" in Chinese; not "| Property | Value |")
            pairs = [cells[i] if len(cells) == 2 and not uses[i] else f"{column.headers[i]} {cells[i]}" for i in kept]
            colon, semicolon = ("：", "；") if is_chinese(line) else (": ", "; ")
            yield at, f"{cells[0]}{colon}{semicolon.join(pairs)}"
        at += len(line) + 1


def _heading(passage: PassageLike) -> str:
    path = getattr(passage, "heading_path", None)
    return _NUMBERING.sub("", path[-1]) if path else ""


def _kind_of(value: object) -> set[str]:
    kind = value_type(value)
    return {kind, "number"} if kind == "quantity" else {kind}


def quoted_attempt(question: str, focus: QuestionFocus, passages: Sequence[PassageLike], rulebase: RuleBase | None,
                   check: Callable[[str], Check], *, lead: str = "",
                   adds: Callable[[Quote], bool] = lambda _quote: True) -> Attempt | None:
    """The first quote of ``passages`` that ``check`` (a draft's whole check: claims verified, no rule
    violated, the question answered) passes, as an attempt the model did not write; None when none passes.
    ``lead``: what the answer says before the quote; ``adds``: whether a quote adds to it (others are not tried)."""
    spent = {"extract": 0.0, "verify": 0.0}
    for quote in quotes(question, focus, passages, rulebase):
        if not adds(quote):
            continue
        result = check(lead + quote.text)
        for stage in spent:
            spent[stage] = round(spent[stage] + result.timings_ms.get(stage, 0.0), 3)
        if result.ok:
            return checked_attempt(result, quote.source, spent)
    return None


def checked_attempt(result: Check, source: int, spent: dict[str, float], *, computed: bool = False) -> Attempt:
    """A passed check of an answer the model did not write (a quote of source [n], or a total computed from
    it), as an attempt: no tokens, only the time its check took."""
    return Attempt(result.answer, True, result.reports, result.violations, False, None,
                   {"prefill": 0.0, "decode": 0.0, **spent}, {"prompt_tokens": 0, "completion_tokens": 0},
                   None, [], result.cited_by_verifier, quoted=source, computed=computed)
