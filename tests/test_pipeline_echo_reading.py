"""An answer restating the premise a question asserts claims it: the verifier must see a false premise repeated."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of

RULES = """
type vehicle "bus model"
entity vehicle e12 "Halvard E12"
entity vehicle e18 "Halvard E18"
type programme "programme"
entity programme phd_full_time "full-time PhD" aka "全日制博士"
relation seat_count(vehicle, seats: number) "seats" limit none
relation vehicle_range(vehicle, quantity[km]) "range" limit none
relation max_submission_period(programme, duration[month]) "maximum period to submission" aka "最长提交期限"
pattern EN_SUBMISSION: "{programme} ... submitted within {d:duration}" -> max_submission_period(programme, d)
pattern ZH_SUBMISSION: "{programme} ... 在 {d:duration} 内提交" -> max_submission_period(programme, d)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, question: str, answer: str) -> list[tuple[str, str]]:
    claims, _left = read_answer(answer, [], [], parse_question(question, rb), rb)
    return [(str(c.fact), c.extractor) for c in claims]


def test_a_restated_premise_is_claimed(rb):
    q = "The Halvard E12 seats 52 passengers; how far can it go on one charge?"
    assert _read(rb, q, "The Halvard E12 seats 52 passengers, and it can go 280 km. [1]") == [
        ("vehicle_range(e12, 280 km)", "focus"), ("seat_count(e12, 52)", "echo")]
    q = "Why must a full-time PhD thesis be submitted within 36 months?"
    assert _read(rb, q, "Because the thesis must be submitted within 36 months for the programme.") == [
        ("max_submission_period(phd_full_time, 36 months)", "echo")]
    q = "为什么全日制博士论文必须在 36 个月内提交？"
    assert _read(rb, q, "因为论文必须在 36 个月内提交。") == [("max_submission_period(phd_full_time, 36 months)", "echo")]
    assert _read(rb, q, "论文不是必须在 36 个月内提交。") == []


def test_a_denied_or_unrelated_echo_is_no_claim(rb):
    q = "Why must a full-time PhD thesis be submitted within 36 months?"
    assert _read(rb, q, "It need not: 36 months is wrong, the documents give 48.") == []
    assert _read(rb, q, "The thesis is not due within 36 months.") == []
    assert _read(rb, q, "Ask your supervisor; 36 months may apply.") == []          # no word of the premise
    # another bus named where the premise's stood: not a restatement of it (the vocabulary reads it as the E18's)
    q = "The Halvard E12 seats 52 passengers; how far can it go on one charge?"
    assert _read(rb, q, "The Halvard E18 seats 52 passengers.") == [("seat_count(e18, 52)", "vocabulary")]


def test_a_value_in_the_asking_clause_or_a_description_is_no_premise(rb):
    # the case asked about, not an assertion
    assert _read(rb, "How far can a bus with 52 seats go on one charge?", "A bus with 52 seats goes 280 km.") == []
    # a described entity: the answer repeats the description
    q = "How long does a full charge take for the bus model that has 52 seats?"
    assert [r for r in _read(rb, q, "The full charge takes 1.5 hours for the bus model that has 52 seats.")
            if r[1] == "echo"] == []
