"""Possessive claims: "<owner>'s <head> is <value>" and "his/her/its/their <head> is <value>" read the one
relation of the owner's type whose name holds the head; no claim when the head names two relations, the value
does not fit, the pronoun cannot stand for the entity, or the value does not follow the verb."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.readers.possessives import possessive_claims
from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of
from symbolic.values import Money, Quantity

RULES = """
entity person chen_hao "Dr Chen Hao" aka "Chen Hao"
entity person wang_yu "Dr Wang Yu" aka "Wang Yu"
entity grade hg8 "HG8"
entity campus suzhou "Suzhou campus"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
relation person_limit(p: person, x: money[CNY]) "a person's grant approval limit"
relation grade_limit(g: grade, c: campus, x: money[CNY]) "grant approval limit"
relation registration_fee_limit(c: campus, x: money[CNY]) "registration fee limit"
relation reports_to(p: person, m: person) "reports to"
relation person_grade(p: person, g: grade) "grade"
relation payload(p: product, m: quantity[kg]) "payload"
relation rated_payload(p: product, m: quantity[kg]) "rated payload"
relation product_price(p: product, x: money[CNY]) "list price"
relation product_discount_limit(p: product, x: money[CNY]) "discount limit"
relation product_order_limit(p: product, x: money[CNY]) "order limit"
pattern P_PAYLOAD: "{product} ... payload (of|is) {m:quantity}" -> payload(product, m)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(text, rb):
    return [(c.fact.relation, c.fact.args, c.text) for c in possessive_claims(text, [], rb)]


def test_an_owner_named_before_its_head(rb):
    assert _read("Chen Hao's limit is CNY 108,000.", rb) == \
        [("person_limit", ("chen_hao", Money(108000, "CNY")), "Chen Hao's limit is CNY 108,000")]
    assert _read("The Suzhou campus's registration fee limit is CNY 3,000 [1].", rb) == \
        [("registration_fee_limit", ("suzhou", Money(3000, "CNY")), "Suzhou campus's registration fee limit is CNY 3,000")]


def test_a_pronoun_stands_for_the_nearest_entity_it_can(rb):
    # tuning mh-02's gold answer: "his" is Chen Hao (a person), not the campus or grade named after him
    text = "Dr Wang Yu reports to Dr Chen Hao, who is grade HG8 at the Suzhou campus, so his limit is CNY 108,000."
    assert _read(text, rb) == [("person_limit", ("chen_hao", Money(108000, "CNY")), "his limit is CNY 108,000")]
    # "its" is no person's
    assert _read("The Suzhou campus hosts it. Its limit is CNY 3,000.", rb) == \
        [("registration_fee_limit", ("suzhou", Money(3000, "CNY")), "Its limit is CNY 3,000")]
    assert _read("Chen Hao signs. Its limit is CNY 3,000.", rb) == []
    # opening a sentence, a pronoun is the last sentence's subject, not its last-named entity (tuning2 fp-02)
    assert _read("The AX-200 is lighter than the LX-500. Its order limit is CNY 500.", rb) == \
        [("product_order_limit", ("ax_200", Money(500, "CNY")), "Its order limit is CNY 500")]
    assert _read("His limit is CNY 3,000.", rb) == []                            # nobody named before


def test_no_claim_when_the_head_names_two_relations_or_the_value_does_not_fit(rb):
    assert _read("The AX-200's limit is CNY 500.", rb) == []        # a discount limit or an order limit?
    assert _read("The AX-200's order limit is CNY 500.", rb) == \
        [("product_order_limit", ("ax_200", Money(500, "CNY")), "AX-200's order limit is CNY 500")]
    assert _read("The AX-200's price is 200 kg.", rb) == []         # a weight is no price
    assert _read("The AX-200's price is not CNY 500.", rb) == []    # the value must follow the verb
    assert _read("Chen Hao's office is in Suzhou.", rb) == []        # no value
    assert _read("", rb) == [] and _read("陈浩的上限为 108,000 元。", rb) == []   # English only
    # of two relations the head names, one stated by no pattern yields to the one documents state
    assert _read("The AX-200's payload is 200 kg.", rb) == \
        [("payload", ("ax_200", Quantity(200, "kg")), "AX-200's payload is 200 kg")]


def test_the_answer_reader_adds_the_possessive_to_another_reading_of_the_value(rb):
    text = "Dr Wang Yu reports to Dr Chen Hao, who is grade HG8 at the Suzhou campus, so his limit is CNY 108,000."
    focus = parse_question("Whom does Wang Yu report to?", rb)
    claims, _left = read_answer(text, [], [], focus, rb)
    read = {(c.fact.relation, c.fact.args[0]) for c in claims}
    assert ("person_limit", "chen_hao") in read and ("reports_to", "wang_yu") in read
    assert [(c.extractor, c.fact.args[0]) for c in claims if c.fact.relation == "person_limit"] == \
        [("possessive", "chen_hao")]
