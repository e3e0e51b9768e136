"""A value the answer sets against the question's premise ("30 days, not 35") is read as the premise's
relation about the premise's subject; nothing without a premise, a contrast, or a value that fits."""
from __future__ import annotations

import pytest

from pipeline.readers.corrections import correction_claims, question_claims
from pipeline.question.focus import parse_question
from symbolic import Claim, Fact
from pipeline_fakes import rulebase_of

RULES = """
type group "employee group"
entity group employee "employee"
type product "product"
entity product ax_200 "AX-200"
relation annual_leave(g: group, d: duration[day]) "annual leave"
relation list_price(p: product, x: money[EUR]) "list price"
relation payload(p: product, m: quantity[kg]) "rated payload"
pattern LEAVE: "{d:duration} of annual leave" -> annual_leave(employee, d)
pattern PAYLOAD: "{product} (carries|carry) {m:quantity}" -> payload(product, m)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, question, answer, taken=()):
    return [str(c.fact) for c in correction_claims(answer, [], parse_question(question, rb), rb, list(taken))]


Q = "Employees get 35 days of annual leave after 5 years; how many carry over?"


def test_x_not_y_against_the_questions_premise(rb):
    assert _read(rb, Q, "Employees with 5 years or more get 30 days, not 35.") == ["annual_leave(employee, 30 days)"]
    assert _read(rb, Q, "They get 30 days rather than 35 days.") == ["annual_leave(employee, 30 days)"]
    assert _read(rb, Q, "员工有 30 天，而不是 35 天。") == ["annual_leave(employee, 30 days)"]


def test_not_y_but_x(rb):
    assert _read(rb, Q, "It is not 35 but 30 days.") == ["annual_leave(employee, 30 days)"]
    assert _read(rb, Q, "不是 35 天，而是 30 天。") == ["annual_leave(employee, 30 days)"]
    assert _read(rb, "Why does the AX-200 carry 300 kg?", "It does not carry 300 kg but 200 kg.") == [
        "payload(ax_200, 200 kg)"]


def test_the_premise_comes_from_the_questions_patterns_or_its_vocabulary(rb):
    assert [str(c.fact) for c in question_claims(Q, parse_question(Q, rb), rb)] == ["annual_leave(employee, 35 days)"]
    q = "Why is the list price of the AX-200 EUR 40,000?"
    assert _read(rb, q, "It is EUR 38,500, not EUR 40,000.") == ["list_price(ax_200, 38500 EUR)"]


def test_no_reading_without_a_premise_a_contrast_or_a_fitting_value(rb):
    assert _read(rb, "How much annual leave do employees get?", "30 days, not 35.") == []   # no premise
    assert _read(rb, Q, "They get 30 days and 35 in Berlin.") == []                        # no contrast
    assert _read(rb, Q, "It is 30 days, not 25.") == []                # 25 is not the premise's value
    assert _read(rb, Q, "It is EUR 30, not 35.") == []                 # money cannot be annual leave
    assert _read(rb, Q, "It is 35 days, not 35.") == []                # the premise itself is no correction


def test_a_relation_and_subject_the_answer_already_claims_is_not_read_again(rb):
    taken = [Claim(Fact("annual_leave", ("employee", 30)), "30 days of annual leave", 0, 10)]
    assert _read(rb, Q, "Employees get 30 days, not 35.", taken) == []
