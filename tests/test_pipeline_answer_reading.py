"""The order of the readers over one answer: a value the question's focus placed may still state a second
relation that its own clause names, never the same relation twice."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of


RULES = """
type city "city"
entity city berlin "Berlin"
type tier "city tier"
entity tier tier_1 "Tier 1"
entity tier tier_2 "Tier 2"
relation hotel_limit_per_night(t: tier, x: money[EUR]) "hotel limit per night"
relation hotel_limit_for_city(c: city, x: money[EUR]) "hotel limit in a city"
relation city_tier(c: city, t: tier) "city tier" unique
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, question, answer):
    claims, left = read_answer(answer, [], [], parse_question(question, rb), rb)
    return [(c.extractor, str(c.fact)) for c in claims], [m.text for m in left]


def test_a_focus_placed_value_also_states_the_relation_its_clause_names(rb):
    claims, left = _read(rb, "What is the hotel limit in Berlin?",
                         "Berlin is a Tier 2 city, so the limit is EUR 140 per night.")
    assert ("focus", "hotel_limit_for_city(berlin, 140 EUR)") in claims
    assert ("vocabulary", "hotel_limit_per_night(tier_2, 140 EUR)") in claims
    assert left == []


def test_the_vocabulary_reader_does_not_repeat_the_focus_relation_nor_read_an_unnamed_one(rb):
    # the clause names the asked relation itself: one claim, by the focus
    claims, _left = _read(rb, "What is the hotel limit in Berlin?", "The hotel limit in a city like Berlin is EUR 140.")
    assert [c for c in claims if "140" in c[1]] == [("focus", "hotel_limit_for_city(berlin, 140 EUR)")]
    # the clause names no relation: only the focus reads it
    claims, _left = _read(rb, "What is the hotel limit in Berlin?", "In Berlin it is EUR 140.")
    assert claims == [("focus", "hotel_limit_for_city(berlin, 140 EUR)")]
