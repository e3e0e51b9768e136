"""Pattern claims read from an answer (pipeline.readers.patterns.extract_claims): a pattern's constant argument gives way
to the one entity of its type that the answer's sentence names instead."""
from __future__ import annotations

import pytest

from pipeline.readers.patterns import extract_claims
from pipeline_fakes import rulebase_of

RULES = """
type user "user type"
entity user undergraduate "undergraduate"
type campus "campus"
entity campus glasgow "Glasgow" aka "Glasgow campus"
entity campus suzhou "Suzhou campus" aka "苏州校区"
entity campus dubai "Dubai"
relation loan_item_limit(u: user, c: campus, n: number) "items at a time"
pattern EN_LOAN_ITEMS: "{user} ... borrow {n:number} items" -> loan_item_limit(user, glasgow, n)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, answer):
    return [str(c.fact) for c in extract_claims(answer, [], rb)[0]]


def test_the_constant_stands_where_the_sentence_names_no_other_entity_of_its_type(rb):
    assert _read(rb, "An undergraduate may borrow 10 items.") == ["loan_item_limit(undergraduate, glasgow, 10)"]
    assert _read(rb, "In Glasgow an undergraduate may borrow 10 items.") == ["loan_item_limit(undergraduate, glasgow, 10)"]


def test_the_one_other_entity_of_its_type_the_sentence_names_takes_its_place(rb):
    assert _read(rb, "At the Suzhou campus an undergraduate may borrow 10 items at a time.") == [
        "loan_item_limit(undergraduate, suzhou, 10)"]
    # another sentence's campus is not this one's
    assert _read(rb, "The Suzhou campus opened in 2006. An undergraduate may borrow 10 items.") == [
        "loan_item_limit(undergraduate, glasgow, 10)"]


def test_two_other_entities_or_the_constant_among_them_leave_it_as_written(rb):
    assert _read(rb, "At the Suzhou campus and in Dubai an undergraduate may borrow 10 items.") == [
        "loan_item_limit(undergraduate, glasgow, 10)"]
    assert _read(rb, "Unlike the Suzhou campus, in Glasgow an undergraduate may borrow 10 items.") == [
        "loan_item_limit(undergraduate, glasgow, 10)"]
