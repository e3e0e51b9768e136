"""Does the answer answer the question? Supported claims are not enough: a verified answer must state what
the question asks for (the proved value, the asked relation, the expected kind of value, about the asked
entity) and cite sources that state it, current over superseded."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.checks.grounding import NOT_CITED, values_match
from pipeline.checks.parts import one_part_as_total
from pipeline.checks.scope import (about_another, about_another_subject, about_no_one_asked, values_for_the_unasked,
                                   asked_entities, cited_evidence, drops_a_negation, from_an_example, relation_terms,
                                   repeats_itself)
from pipeline.lang import alternation, cue_table, words
from pipeline.proof.calculation import Calculation, calculations, computed_by
from pipeline.proof.attribute import other_bound
from pipeline.proof.proving import ProvenAnswer
from pipeline.question.answer_types import TOTAL_WORDS, asked_currency, asking_clause, asks_two
from pipeline.question.asked import asked_attribute, asked_relations
from pipeline.question.codes import names_a_sibling, names_another_code
from pipeline.question.condition import condition_of, measures_the_condition, needed_topics
from pipeline.question.focus import QuestionFocus
from pipeline.text.citations import mask_citations
from pipeline.text.entities import find_entities
from pipeline.text.periods import PER_ZH, ZH_PERIOD, around, periods, whole_periods
from pipeline.text.script import is_chinese
from pipeline.text.terms import content_terms, found_in
from pipeline.text.values import EvidenceValue, ValueMention, find_values, own_mentions, states_value
from pipeline.types import ClaimReport
from symbolic import Claim, RuleBase
from symbolic.values import Money, Quantity, format_value, value_type

# The words that say yes or no (lang/<code>/checks.toml polarity).
_POLARITY = re.compile(alternation("checks.polarity"), re.IGNORECASE)
# Words of the question that name the kind of answer, not its topic ("how many days", and its Chinese words).
_ASKING = frozenset(words("checks.asking_words"))
# A Chinese "how often must it be done once": its "must be done once" says how it asks, as "how often" does, not
# what about (lang/zh/checks.toml asking_phrases).
_ASKING_ZH = re.compile(alternation("checks.asking_phrases"))
# A Chinese character pair holding a function character (a possessive particle and "year" of "year-end bonus")
# names no topic (lang/zh/checks.toml function_chars).
_ZH_FUNCTION = set(words("checks.function_chars"))


def values_of(claims: Sequence[Claim], mentions: Sequence[ValueMention]) -> list[object]:
    out: list[object] = [m.value for m in mentions]
    out += [c.fact.args[-1] for c in claims if c.fact.args]
    return out


# "per week", in Chinese too: the period or unit a rate is counted in. A question asking per week is not answered by a
# value per calendar year (eval un-02 with the 0.5B model: 20 working days per calendar year, for "how many
# days per week").

# The measure a question names, as a unit dimension of symbolic.values: a "turning radius" is a length, so
# "2.0 m/s" (a speed) does not answer it (eval un-08 with the 0.5B model).
# (lang/<code>/checks.toml [[measures]]: a row's id is its dimension.)
_MEASURES = [(re.compile(row["cue"], re.I), row["id"]) for row in cue_table("checks.measures")]
# A count of two or more things the question asks a total for ("two Frostline trucks", "three nights", "10 AX-200
# robots"). English only; a Chinese count ("two vehicles") is not read.
# Spans of time ("3 years of service", "10 days ago", "within 30 days") qualify a question rather than count
# what it totals, so they are not read; nights are (a night allowance for "three nights").
_TIME_UNITS = alternation("checks.counted_time_units")
_COUNTED = re.compile(rf"\b(?:{alternation('checks.counted_numbers')}|[2-9]|[1-9]\d{{1,2}})\s+"
                      rf"(?:[A-Za-z][\w-]*\s+){{0,2}}?(?!(?:{_TIME_UNITS})s\b)[a-z]+s\b"
                      rf"(?!\s+(?:{_TIME_UNITS})s?\b)",
                      re.IGNORECASE)
_UNEVALUATED = re.compile(r"\d\s*[*×]\s*\d")
# A why-question is answered by a reason or by denying its premise; restating the premise answers nothing
# ("Why does the AX-200 carry 300 kg while the LX-500 only carries 200 kg?" -> "The AX-200 carries 300 kg while
# the LX-500 only carries 200 kg.", shipped fp-01 with the 135M model).
_WHY = re.compile(alternation("checks.why"), re.IGNORECASE)
_REASON = re.compile(alternation("checks.reasons"), re.IGNORECASE)
# Where the words after an answer's value stop saying what it is counted per.
_VALUE_CLAUSE_END = re.compile(rf"[.,;:，。；：\n]|\b(?:{alternation('checks.value_clause_words')})\b")


def asks_why(question: str) -> bool:
    """A why-question (lang/<code>/checks.toml why): answered by a reason or by denying its premise."""
    return bool(_WHY.search(question))


def asked_dimension(question: str) -> str | None:
    return next((dim for rx, dim in _MEASURES if rx.search(question)), None)


def counted_units(question: str) -> str | None:
    """The count of things a question asks a total for ("two Frostline RT-18 trucks"), or None."""
    m = _COUNTED.search(question)
    return m.group(0) if m else None


def source_periods(values: Sequence[object], evidence: Sequence[EvidenceValue]) -> set[str]:
    """The periods the sources count the answer's values in, where the answer says none ("[1] 85" from a Chinese
    "paid at 85 yuan an hour"): a bare figure is what its source says it is."""
    out: set[str] = set()
    for ev in evidence:
        if any(values_match(v, ev.value) for v in values):
            at = ev.context.find(ev.text)
            if at >= 0:
                out |= periods(around(ev.context, at, at + len(ev.text)))
    return out


def value_periods(text: str, mentions: Sequence[ValueMention]) -> set[str]:
    """The periods the answer's values are counted in, read next to each value ("2.8 L of diesel per hour",
    a Chinese "700 yuan a night"): an answer that repeats the question's "per day" and states a value per hour
    counts per hour (held-out sup-03 with the 135M model)."""
    out: set[str] = set()
    ordered = sorted(mentions, key=lambda m: m.start)
    for i, m in enumerate(ordered):
        stop = ordered[i + 1].start if i + 1 < len(ordered) else len(text)
        after = _VALUE_CLAUSE_END.split(text[m.end:min(stop, m.end + 40)])[0]
        # "700 yuan a night", "55,200 yuan a year in all": a Chinese period leads its value
        before = text[max(0, m.start - 5):m.start]
        out |= periods(after) | {ZH_PERIOD[z.group(1)] for z in PER_ZH.finditer(before)} | whole_periods(before)
    return out


def _rate_as_total(focus: QuestionFocus, amounts: Sequence[Money], calcs: Sequence[Calculation]) -> str | None:
    """Why an answer states a rate where the question asks the total its counts make (a Chinese "a Shenzhen
    employee travels to Chengdu for 4 days; how much is the meal allowance in all?" -> "120 yuan in all", the rate
    per day; shipped num-10 with the 0.5B model and no rule files)."""
    if "money" not in focus.answer_types or "yesno" in focus.answer_types or not amounts \
            or not TOTAL_WORDS.search(focus.question):       # "the per diem for a 3-day trip" may ask the rate
        return None
    if not calcs or any(computed_by(v, calcs) for v in amounts):
        return None
    rate = next((c for c in calcs if any(v == c.rate for v in amounts)), None)
    if rate is None:
        return None
    return (f"the question counts {rate.counted()}, and the answer states the rate per {' per '.join(rate.per)} "
            f"({format_value(rate.rate)}), not its total")


def topic_terms(question: str, focus: QuestionFocus) -> set[str]:
    """The question's content terms that say what it is about (not how it asks, not the entity names)."""
    q = _ASKING_ZH.sub(" ", question)
    named = set().union(*(content_terms(e.text) for e in focus.entities)) if focus.entities else set()
    return {t for t in content_terms(q) if t not in _ASKING and t not in named and not set(t) & _ZH_FUNCTION}


# Share of the question's topic terms an answer must use. A worded answer (VERBOSE_TERMS content terms or
# more) must use half of them itself: a copied sentence sharing only "trips" is no answer to "which
# business trips need pre-trip approval?". A terse one ("5,000 operating hours [1]") answers through the
# source rows stating its values, which count with it. Chinese topic terms are character pairs, many
# spanning two words (the last character of "need" and the first of "replace" in a Chinese "needs replacing"),
# so fewer of them can be expected to recur.
TOPIC_SHARE = {"en": (0.5, 0.3), "zh": (0.2, 0.2)}     # (worded, terse)
VERBOSE_TERMS = {"en": 4, "zh": 8}                       # Chinese terms are character pairs: more per word


def _said_about(mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue],
                with_heading: bool = False) -> str:
    """The cited source sentences (table rows, with the value's column header; ``with_heading``: and their
    section heading) that state the answer's values: a terse "5,000 operating hours [1]" answers through the row it
    quotes, "28 days [1]" through its "Annual leave" column."""
    out = []
    for m in mentions:
        out += [" ".join(x for x in (ev.heading if with_heading else "", ev.context,
                                     ev.column.header if ev.column else "") if x)
                for ev in cited_evidence(m, evidence)]
    return " ".join(out)


def answer_gap(answer: str, focus: QuestionFocus, claims: Sequence[Claim], mentions: Sequence[ValueMention],
               rulebase: RuleBase | None, proof: ProvenAnswer | None = None, evidence: Sequence[EvidenceValue] = (),
               calcs: Sequence[Calculation] | None = None) -> str | None:
    """None when ``answer`` addresses ``focus``; otherwise why not, in words the model can act on. ``calcs``: the
    totals the question's counts make of the evidence's rates, where the caller has them already."""
    text = mask_citations(answer)
    values = values_of(claims, mentions)
    if proof is not None:
        if not states_value(text, values, proof.value):
            return f"it does not state the answer the documents give ({format_value(proof.value)})"
        return about_another_subject(text, proof, rulebase) or names_another_code(focus.question, text)
    if _UNEVALUATED.search(text):
        return "it leaves a calculation unevaluated"
    if repeats_itself(text):
        return "it repeats itself"
    if asks_two(focus.question) and len({format_value(v) for v in values}) < 2:
        return "the question asks two things, and the answer states one value at most"
    goal_relations = asked_relations(focus, rulebase)
    stated = {c.fact.relation for c in claims}
    if rulebase is not None:
        # "the maximum turnaround … is 35 minutes", read as the minimum turnaround
        bound = next(filter(None, (other_bound(focus.question, r, rulebase) for r in sorted(stated))), None)
        if bound:
            return bound
    if goal_relations and stated and not stated & goal_relations:
        goal = focus.goals[0].relation
        return f"it states {', '.join(sorted(stated))}, but the question asks for {goal}"
    if not goal_relations and stated and rulebase is not None:
        # no goal parsed, so no relation to compare with: a relation none of whose names shares a word with
        # the question is about something else ("How long must a train journey be before I may travel first
        # class?" -> a booking deadline, shipped sup-08 with the 0.5B model). A relation with no name in the
        # question's language cannot be judged so (a Chinese question, an English-only rule file).
        question_terms = content_terms(focus.question)
        chinese = is_chinese(focus.question)
        if not any(relation_terms(rulebase, r, chinese=chinese) & question_terms
                   or not relation_terms(rulebase, r, chinese=chinese) for r in stated):
            return f"it states {', '.join(sorted(stated))}, which the question does not ask about"
    wanted = focus.answer_types
    value_kinds = {value_type(v) for v in values}
    if wanted & {"duration", "money", "quantity", "percent", "date", "number"} and not wanted & {"yesno", "person",
                                                                                                 "entity"}:
        if not value_kinds & (wanted | ({"quantity"} if "number" in wanted else set())):
            kinds = " or ".join(sorted(wanted))
            return f"the question asks for a {kinds}, and the answer states none"
    if "yesno" in wanted and not _POLARITY.search(text):
        return "the question asks yes or no, and the answer says neither"
    if "yesno" in wanted and values:
        asked_values = [v for v, *_ in find_values(focus.question)]
        if all(any(v == a for a in asked_values) for v in values):
            return "it says yes or no with no fact from the documents, only the question's own values"
    if _WHY.search(focus.question) and not reasons(text) - reasons(focus.question):
        return "the question asks why, and the answer gives no reason and does not correct its premise"
    dim = asked_dimension(focus.question)
    dims = {v.dimension for v in values if isinstance(v, Quantity) and v.dimension}
    if dim and dims and dim not in dims:
        return f"the question asks for a {dim}, the answer states a {' or '.join(sorted(dims))}"
    asked_cur, said_cur = asked_currency(focus.question), {v.currency for v in values if isinstance(v, Money)}
    if asked_cur and said_cur and asked_cur not in said_cur:
        return f"the question asks for an amount in {asked_cur}, the answer states {' or '.join(sorted(said_cur))}"
    if asked_cur and not said_cur and "yesno" not in wanted:
        # "how many pounds in all?" answered with a list of days and percentages copied from the sources (blind/07)
        return f"the question asks for an amount in {asked_cur}, and the answer states none"
    asked_per, said_per = periods(focus.question), value_periods(text, mentions) or periods(text) \
        or source_periods(values, evidence)
    if asked_per and said_per and not asked_per & said_per:
        return f"the question asks per {', '.join(sorted(asked_per))}, the answer counts per {', '.join(sorted(said_per))}"
    counted = counted_units(focus.question)
    amounts = [v for v in values if isinstance(v, Money)]
    if counted and not asked_per and amounts and all(any(values_match(v, ev.value) for ev in evidence) for v in amounts):
        return (f"the question asks about {counted}, and the answer states only an amount the sources give as it "
                f"is, not the total for {counted}")
    if calcs is None:
        calcs = calculations(focus.question, evidence)
    rate_as_total = _rate_as_total(focus, amounts, calcs) if not asked_per else None
    if rate_as_total:
        return rate_as_total
    part = one_part_as_total(focus, claims, own_mentions(mentions, focus.question), evidence, rulebase)
    if part:
        return part
    off_column = column_gap(focus, mentions, evidence)
    if off_column:
        return off_column
    if rulebase is not None and focus.entities:
        asked = asked_entities(focus)
        said = {(e.type, e.entity_id) for e in find_entities(text, rulebase)}
        for etype, eid in said - asked:
            if any(t == etype for t, _ in asked) and not any((etype, a) in said for t, a in asked if t == etype):
                other = next(a for t, a in asked if t == etype)
                return f"it is about {eid}, but the question asks about {other}"
    answered = own_mentions(mentions, focus.question)   # not "Severity 2" again
    start, end = asking_clause(focus.question)
    elsewhere = about_another(focus, mentions, evidence, rulebase) or drops_a_negation(text, answered, evidence) \
        or names_a_sibling(focus.question[start:end], text) or names_another_code(focus.question, text) \
        or from_an_example(focus.question, answered, evidence) or values_for_the_unasked(focus, text, answered)
    if elsewhere:
        return elsewhere
    topics = topic_terms(focus.question, focus)
    condition = condition_of(focus.question, topics)
    if condition is not None:
        if measures_the_condition(text, condition, [m.value for m in answered]):
            return (f"it gives the value of what bounds the question ({', '.join(sorted(condition.bound))}), not of "
                    f"what it asks about ({', '.join(sorted(condition.asked))})")
    if len(topics) >= 2:
        own = content_terms(text.replace("\n", " "))
        lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in focus.question) else "en"
        worded, terse = TOPIC_SHARE[lang]
        if len(own) >= VERBOSE_TERMS[lang]:
            share = worded
            used = found_in(topics, own)
            asking = topic_terms(focus.question[start:end], focus) & topics if start else set()
            if len(used) < share * len(needed_topics(topics, condition, used)) and asking and \
                    len(found_in(asking, own)) >= worded * len(asking):
                # it answers the asking clause in its own words; the scene before it ("a safety incident that
                # happened on a tram") may be said by the cited sources stating its values (the "Critical:
                # safety incident, injury … 2 hours" row): a value of another case has no such source
                used = found_in(topics, own | content_terms(_said_about(mentions, evidence)))
        else:
            share = terse
            used = found_in(topics, own | content_terms(_said_about(mentions, evidence)))
        topics = needed_topics(topics, condition, used)
        enough = len(used) >= share * len(topics)
        if not used:
            return "it shares no word with what the question asks about"
        if not enough:
            missing = ", ".join(sorted(topics - used)[:4])
            return f"it leaves out what the question asks about ({missing})"
        # "With the maximum extensions, how long can a full-time PhD student take to submit the thesis?" is not
        # answered by "The maximum extensions … can be 12 months" (tuning num-04): a worded answer uses the words
        # of the clause that asks, not only those of the scene before it, as a quote must (pipeline.answers.quoted)
        asking = topic_terms(focus.question[start:end], focus) & topics if start else set()
        if len(own) >= VERBOSE_TERMS[lang] and len(asking) >= 2 and len(found_in(asking, own)) < worded * len(asking):
            missing = ", ".join(sorted(asking - found_in(asking, own))[:4])
            return f"it answers the question's setting, not what its last clause asks ({missing})"
        if len(own) >= VERBOSE_TERMS[lang] and mentions:
            # A worded answer can borrow the question's words ("Northwind contributes to the company pension
            # … by providing a home office budget of EUR 500", shipped un-04): its values' source sentences
            # must be about the question too, as a terse answer's are. Only where they are in the
            # question's language (an English policy answers Chinese questions in other words).
            source = _said_about(mentions, evidence, with_heading=True)
            if source and any("\u4e00" <= ch <= "\u9fff" for ch in source) == (lang == "zh") and \
                    len(found_in(topics, content_terms(source))) < terse * len(topics):
                return "its values' sources are about something else than what the question asks"
    attribute = asked_attribute(focus)
    if attribute and answered:
        # a value read by no relation is grounded by the sources stating it; they must state it as what is
        # asked: "2 business days" is the resolution target in its source, not the response time (shipped ans-05)
        source = _said_about(answered, evidence, with_heading=True)
        if source and not is_chinese(source) and not found_in(attribute, content_terms(source)):
            return (f"its values' sources do not give them as the {' '.join(sorted(attribute))} the question "
                    f"asks about")
    return about_no_one_asked(focus, text, claims, answered, evidence, rulebase)


def reasons(text: str) -> set[str]:
    """The words of ``text`` that give a reason or deny something ("because", "not", their Chinese words)."""
    return {m.group(0).lower() for m in _REASON.finditer(text)}


def column_gap(focus: QuestionFocus, mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue]) -> str | None:
    """A value the sources state only in a table column other than the one the question names: "36 months" is
    the LX-500 row's robot warranty, and the question asks how long it runs on a battery charge, a word of the
    "Battery warranty" column (eval ans-02 with the 135M model). A cell stated elsewhere too, or in a column
    no other column of its table out-names, is left alone."""
    topics = topic_terms(focus.question, focus)
    if not topics:
        return None

    def named(header: str) -> int:
        return len(content_terms(header) & topics)

    for m in mentions:
        cells = [ev for ev in evidence if values_match(m.value, ev.value) and (not m.cited or ev.doc_id in m.cited)]
        misplaced = []
        for ev in cells:
            if ev.column is None:
                break
            rivals = [h for h in ev.column.headers[1:] if h != ev.column.header and named(h) > named(ev.column.header)]
            if not rivals:
                break
            misplaced.append((ev.column.header, max(rivals, key=named)))
        else:
            if misplaced:
                own, asked = misplaced[0]
                return f"{m.text} is the sources' \"{own}\", but the question asks about \"{asked}\""
    return None


def citation_gap(reports: Sequence[ClaimReport]) -> str | None:
    """A claim whose support lies only in a source the answer does not cite, or that cites a superseded
    source where a current one states the value: the citation points the reader to the wrong place."""
    for r in reports:
        if r.verdict == "supported" and NOT_CITED in r.explanation:
            if not r.cited:
                return f"\"{r.text}\" cites no source"
            return f"\"{r.text}\" cites a source that does not state it"
        if r.verdict == "supported" and any(e.get("superseded") for e in r.evidence) and "superseded" in r.explanation:
            return f"\"{r.text}\" rests on a superseded source"
    return None
