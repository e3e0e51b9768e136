"""A question's measure bounded by a condition ("how long may they drive before they must take a break?"): the
condition's value is no answer, a quote of the measure's is, and an answer need not repeat the condition's words."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig
from pipeline.question.condition import Condition, condition_of, measures_the_condition
from pipeline.text.terms import one_word
from pipeline.text.values import find_values
from pipeline.generate.prompts import ABSTAIN_SENTINEL
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, answer_gap_for, rulebase_of

DRIVE = Condition(frozenset({"drive"}), frozenset({"break", "take"}))


def measures(text: str, condition: Condition = DRIVE) -> bool:
    return measures_the_condition(text, condition, [v for v, *_ in find_values(text)])


def test_the_condition_is_split_from_the_measure_only_after_the_measures_verb():
    topics = {"drive", "break", "take"}
    assert condition_of("Bus operators work long shifts, so how long may they drive before they must take a break?",
                        topics) == DRIVE
    assert condition_of("What is the longest time an operator may drive before a break?", {"drive", "break", "time"}) \
        == Condition(frozenset({"drive", "time"}), frozenset({"break"}))
    # the auxiliary after the conjunction: "after the trip" is part of the measure
    assert condition_of("How many days after the trip must the report be submitted?",
                        {"trip", "report", "submit"}) is None
    # nothing measured before the conjunction: the condition is what is asked about
    assert condition_of("How long before the trip must I book?", {"trip", "book"}) is None
    assert condition_of("How long may they drive?", {"drive"}) is None
    assert condition_of("公交司机连续驾驶多久之后必须休息？", {"驾驶", "休息"}) is None      # English only


def test_a_value_given_as_the_conditions_measure_is_told_from_the_measures():
    assert measures("After the longest driving period an operator takes a break of at least 30 minutes.")
    assert measures("Operators take a 30-minute break.")
    assert measures("The break lasts 30 minutes.")
    assert not measures("Bus operator: Longest continuous driving 4.5 hours")
    assert not measures("Operators take a break of 30 minutes after driving 4.5 hours.")
    # near no word of either: it says nothing either way
    assert not measures("The depot opens 30 minutes early.")
    # "replaced every 36 months" is an interval, not the replacement's own length
    battery = Condition(frozenset({"battery", "pack", "last"}), frozenset({"replace"}))
    assert not measures("The AX-200 battery pack must be replaced every 36 months of operation.", battery)


def test_inflected_forms_of_a_short_word_are_one_word():
    assert [one_word(a, b) for a, b in (("drive", "driving"), ("take", "taken"), ("plan", "planned"),
                                         ("drive", "driver"), ("be", "bed"), ("use", "using"))] == \
        [True, True, True, False, False, False]


RULES = """
type operator_type "operator type"
entity operator_type bus_operator "bus operator"
entity operator_type tram_operator "tram operator"
relation max_shift_length(o: operator_type, h: duration[hour]) "longest shift"
relation max_continuous_driving(o: operator_type, h: duration[hour]) "longest continuous driving"
pattern P_SHIFT: "{operator_type} ... longest shift of {h:duration}" -> max_shift_length(operator_type, h)
"""
DUTY = FakePassage("duty.md", "A bus operator works a longest shift of 10 hours. After the longest driving period an "
                   "operator takes a break of at least 30 minutes before driving again.\n\n"
                   "| Operator type | Longest continuous driving |\n|---|---|\n| Bus operator | 4.5 hours |\n"
                   "| Tram operator | 4 hours |", 0.9, chunk_id="duty")
ASK = "Bus operators can work 12-hour shifts, so how long may they drive before they must take a break?"


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def test_the_rest_of_a_corrected_question_is_answered_by_the_measure_not_the_condition(rb):
    a = Answerer(ScriptedGenerator([ABSTAIN_SENTINEL]), FixedRetriever([DUTY]), rb,
                 AnswererConfig(lm_extraction=False))
    r = a.ask(ASK)
    assert r.status == "verified", r.reason
    assert r.answer == ("That is not right: the longest shift for bus operator is 10 hours [1]. "
                        "Bus operator: Longest continuous driving 4.5 hours [1]")


def test_a_draft_giving_the_conditions_value_does_not_answer(rb):
    gap = answer_gap_for(rb, "How long may bus operators drive before they must take a break?",
                         "Bus operators must take a break of at least 30 minutes [1].", [DUTY])
    assert gap is not None and gap.startswith("it gives the value of what bounds the question (break, take)")
    # the measure's value, without the condition's words, answers
    assert answer_gap_for(rb, "How long may bus operators drive before they must take a break?",
                          "Bus operators may drive at most 4.5 hours [1].", [DUTY]) is None


def test_the_conditions_words_count_where_a_statement_uses_them():
    from pipeline.question.condition import needed_topics
    from pipeline.question.focus import parse_question
    from pipeline.answers.quoted import quotes

    rail = Condition(frozenset({"train", "journey"}), frozenset({"travel", "first", "class"}))
    topics = {"train", "journey", "travel", "first", "class"}
    assert needed_topics(topics, rail, {"journey", "first", "class"}) == {"train", "journey", "first", "class"}
    assert needed_topics(topics, rail, {"journey"}) == {"train", "journey"}
    assert needed_topics(topics, None, {"journey"}) == topics
    # shipped sup-08: what the threshold unlocks ("first class") tells the statement apart from other journeys'
    travel = FakePassage("travel.md", "A rail journey is booked at least 7 days before departure. First class is "
                         "allowed for a single rail journey that is scheduled to take more than 2 hours.", 0.9)
    question = "How long must a train journey be before I may travel first class?"
    [quote] = quotes(question, parse_question(question, None), [travel])
    assert quote.sentence.startswith("First class is allowed") and "2 hours" in quote.text
