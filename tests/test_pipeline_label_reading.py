"""'label: value' claims: the label names the relation, a bracket before the colon names what it is about,
the value or entity after the colon ends it; no claim when the label names no relation or two equally, or
the value is negated."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.readers.labels import label_claims
from pipeline.question.focus import parse_question
from pipeline_fakes import facts_read, rulebase_of

RULES = """
type city "city"
entity city paris "Paris"
entity city berlin "Berlin"
type tier "city tier"
entity tier tier_1 "Tier 1" aka "一类城市"
entity tier tier_2 "Tier 2"
type day "day type"
entity day arrival "arrival day"
entity day full "full travel day"
relation city_tier(c: city, t: tier) "city tier" aka "城市分类"
relation hotel_limit_for_city(c: city, x: money[EUR]) "hotel limit in a city"
relation per_diem(d: day, x: money[EUR]) "per diem"
relation meal_limit(d: day, x: money[EUR]) "meal limit"
relation stay_limit(c: city, nights: number, x: money[EUR]) "hotel stay limit"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _labels(rb, question, answer):
    return facts_read(label_claims, rb, question, answer)


def test_composed_steps_are_read_as_claims(rb):
    answer = ("The total per diem for 3 days is EUR 104 (per diem (arrival day): EUR 26; per diem (full travel day): "
              "EUR 52).")
    assert _labels(rb, "What is the per diem for 3 days?", answer) == [
        "per_diem(arrival, 26 EUR)", "per_diem(full, 52 EUR)"]
    answer = "The hotel stay cost for Paris, 4 nights is EUR 720 (hotel limit in a city: EUR 180; city tier: Tier 1)."
    assert _labels(rb, "What may 4 nights in Paris cost?", answer) == [
        "hotel_limit_for_city(paris, 180 EUR)", "city_tier(paris, tier_1)"]


def test_the_subject_comes_from_the_sentence_or_the_question(rb):
    assert _labels(rb, "Which tier is Berlin?", "城市分类：一类城市。") == ["city_tier(berlin, tier_1)"]
    # two cities and no bracket: whose tier it is, the labels do not say
    assert _labels(rb, "Compare Paris and Berlin.", "City tier: Tier 1.") == []


def test_no_claim_from_a_label_naming_nothing_or_a_negated_value(rb):
    assert _labels(rb, "What about the arrival day?", "Note (arrival day): EUR 26.") == []
    assert _labels(rb, "What about the arrival day?", "Per diem (arrival day): not EUR 26.") == []
    # "limit" names the meal limit and the hotel limit equally, half of each
    assert _labels(rb, "What about Paris?", "Limit (arrival day): EUR 26.") == []


def test_the_answer_reader_does_not_read_a_labelled_value_twice(rb):
    answer = "Per diem (arrival day): EUR 26."
    q = "What is the per diem on the arrival day?"
    claims, left = read_answer(answer, [], [{"role": "user", "content": q}], parse_question(q, rb), rb)
    assert [str(c.fact) for c in claims] == ["per_diem(arrival, 26 EUR)"] and left == []


def test_a_value_argument_is_the_questions_own(rb):
    answer = "EUR 720 (hotel stay limit: EUR 720)."
    assert _labels(rb, "What may 4 nights in Paris cost?", answer) == ["stay_limit(paris, 4, 720 EUR)"]
    # two counts in the question: which one the label's relation takes is not said
    assert _labels(rb, "What may 4 nights in Paris cost for 2 people?", answer) == []
