"""Band claims: a range the answer states and the value its clause gives it, read into a relation of two
bounds and a value the clause names; no reading of a range without its relation's name, of a negated or
asked value, or of a range and a value in different clauses."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.readers.bands import band_claims, ranges
from pipeline.readers.patterns import extract_claims
from pipeline.question.focus import parse_question
from pipeline_fakes import facts_read, rulebase_of

RULES = """
type product "product"
entity product ax_200 "AX-200"
relation discount_band(from: number, to: number, percent) "volume discount band" aka "批量折扣"
relation leave_band(from: duration[year], to: duration[year], d: duration[day]) "annual leave for years of service"
relation list_price(p: product, x: money[EUR]) "list price"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _bands(rb, question, answer):
    return facts_read(band_claims, rb, question, answer)


@pytest.mark.parametrize("text, bounds", [
    ("orders of 10 to 24 robots", ["10", "24"]), ("orders of 10-24 robots", ["10", "24"]),
    ("between 10 and 24 robots", ["10", "24"]), ("10 至 24 台", ["10", "24"]),
    ("10 and 24 robots", []), ("10, 24 robots", []),
])
def test_ranges_are_consecutive_values_joined_by_to_or_between_and(rb, text, bounds):
    _claims, mentions = extract_claims(text, [], rb)
    assert [m.text for pair in ranges(text, mentions) for m in pair] == bounds


def test_a_range_and_the_value_its_clause_names_as_a_band(rb):
    assert _bands(rb, "What discount do 12 robots get?",
                  "An order of 10 to 24 robots gets a volume discount of 8 % on the list price.") == [
        "discount_band(10, 24, 8%)"]
    # the value before the range, and after a colon
    assert _bands(rb, "Which discounts are there?", "The 8 % volume discount is for 10 to 24 robots.") == [
        "discount_band(10, 24, 8%)"]
    assert _bands(rb, "Which discounts are there?", "Volume discount for 10-24 robots: 8 %.") == [
        "discount_band(10, 24, 8%)"]
    assert _bands(rb, "有哪些批量折扣？", "10 至 24 台享受 8% 的批量折扣。") == ["discount_band(10, 24, 8%)"]


def test_a_bare_lower_bound_takes_the_upper_bounds_unit(rb):
    assert _bands(rb, "How much annual leave do I get?",
                  "With 5 to 10 years of service the annual leave is 15 days.") == [
        "leave_band(5 years, 10 years, 15 days)"]


def test_no_band_without_its_name_or_with_a_negated_asked_or_separate_value(rb):
    assert _bands(rb, "What do 12 robots get?", "An order of 10 to 24 robots gets 8 %.") == []       # no name
    assert _bands(rb, "Is it 9 %?", "An order of 10 to 24 robots gets a volume discount of 9 %.") == []
    assert _bands(rb, "What do 12 robots get?", "An order of 10 to 24 robots gets a volume discount that is not 9 %.") == []
    assert _bands(rb, "What do 12 robots get?", "Orders of 10 to 24 robots qualify; the volume discount is 8 %.") == []


def test_the_answer_reader_keeps_band_claims_and_their_values_out_of_bare_values(rb):
    answer = "An order of 10 to 24 robots gets a volume discount of 8 %."
    q = "What discount do 12 robots get?"
    claims, left = read_answer(answer, [], [{"role": "user", "content": q}], parse_question(q, rb), rb)
    assert [(c.extractor, str(c.fact)) for c in claims] == [("band", "discount_band(10, 24, 8%)")]
    assert left == []
