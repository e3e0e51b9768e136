"""A relation carried over to a coordinated clause that leaves it unsaid ("... of 200 kg and the LX-500 of
500 kg"): read only with link words between the new subject and a value the relation takes."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of


RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
entity product mx_900 "MX-900"
type city "city"
entity city berlin "Berlin"
entity city paris "Paris"
type tier "city tier"
entity tier tier_1 "Tier 1"
entity tier tier_2 "Tier 2"
relation payload(p: product, m: quantity[kg]) "rated payload" aka "额定载重"
relation list_price(p: product, x: money[EUR]) "list price"
relation battery_warranty(p: product, d: duration[month]) "battery warranty"
relation city_tier(c: city, t: tier) "city tier" unique
pattern PAYLOAD: "{product} ... payload of {m:quantity}" -> payload(product, m)
pattern PAYLOAD_ZH: "{product} ... 额定载重 [为|是] {m:quantity}" -> payload(product, m)
pattern PRICE: "{product} costs {x:money}" -> list_price(product, x)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, answer, question="Tell me about the robots."):
    claims, _left = read_answer(answer, [], [], parse_question(question, rb), rb)
    return [(c.extractor, str(c.fact)) for c in claims]


def test_the_relation_carries_over_to_a_gapped_clause(rb):
    got = _read(rb, "The AX-200 has a rated payload of 200 kg and the LX-500 of 500 kg.")
    assert got == [("pattern", "payload(ax_200, 200 kg)"), ("coordination", "payload(lx_500, 500 kg)")]


def test_the_claim_spans_only_the_gapped_clause_and_its_value_is_no_longer_a_bare_value(rb):
    answer = "The AX-200 has a rated payload of 200 kg, the LX-500 500 kg."
    claims, left = read_answer(answer, [], [], parse_question("x?", rb), rb)
    carried = [c for c in claims if c.extractor == "coordination"]
    assert [c.text for c in carried] == ["LX-500 500 kg"]
    assert [m.text for m in left] == []


def test_a_chain_of_gapped_clauses_and_chinese_commas(rb):
    got = _read(rb, "The AX-200 has a rated payload of 200 kg, the LX-500 of 500 kg and the MX-900 of 900 kg.")
    assert [f for _e, f in got] == ["payload(ax_200, 200 kg)", "payload(lx_500, 500 kg)", "payload(mx_900, 900 kg)"]
    assert [f for _e, f in _read(rb, "AX-200 的额定载重为 200 kg，LX-500 为 500 kg。")] == [
        "payload(ax_200, 200 kg)", "payload(lx_500, 500 kg)"]


def test_entity_valued_relations_carry_over_too(rb):
    got = _read(rb, "Paris is a Tier 1 city, Berlin Tier 2.")
    assert ("coordination", "city_tier(berlin, tier_2)") in got


def test_not_read_when_the_clause_says_something_else_or_nothing(rb):
    # another verb, a negation, a value the relation cannot take, no conjunction, another sentence
    for answer in ("The AX-200 has a rated payload of 200 kg and the LX-500 weighs 500 kg.",
                   "The AX-200 has a rated payload of 200 kg and the LX-500 is not 500 kg.",
                   "The AX-200 has a rated payload of 200 kg and the LX-500 of 18 months.",
                   "The AX-200 has a rated payload of 200 kg the LX-500 500 kg.",
                   "The AX-200 has a rated payload of 200 kg. And the LX-500 of 500 kg."):
        assert [f for e, f in _read(rb, answer) if e == "coordination"] == [], answer


def test_a_subject_already_claimed_is_not_read_again(rb):
    got = _read(rb, "The AX-200 costs EUR 38,500 and the LX-500 costs EUR 52,000, and the LX-500 EUR 1.")
    assert [f for _e, f in got] == ["list_price(ax_200, 38500 EUR)", "list_price(lx_500, 52000 EUR)"]


def test_a_relation_of_three_places_carries_over_a_changed_argument(tmp_path):
    rb3 = rulebase_of("""
type course "course"
entity course hf "HF safety training"
type campus "campus"
entity campus glasgow "Glasgow"
entity campus suzhou "Suzhou campus" aka "苏州校区"
entity campus dubai "Dubai"
relation validity(c: course, s: campus, d: duration[month]) "valid"
pattern VALID: "{course} is valid for {d:duration} in {campus}" -> validity(course, campus, d)
pattern VALID_ZH: "{course}在{campus}的有效期为 {d:duration}" -> validity(course, campus, d)
""", tmp_path)
    got = _read(rb3, "HF safety training is valid for 12 months in Glasgow and for 6 months at the Suzhou campus.")
    assert ("coordination", "validity(hf, suzhou, 6 months)") in got
    got = _read(rb3, "HF safety training is valid for 12 months in Glasgow, for 6 months at the Suzhou campus "
                     "and for 3 months in Dubai.")
    assert [f for e, f in got if e == "coordination"] == ["validity(hf, suzhou, 6 months)", "validity(hf, dubai, 3 months)"]
    got = _read(rb3, "HF safety training在Glasgow的有效期为 12 个月，苏州校区为 6 个月。")
    assert ("coordination", "validity(hf, suzhou, 6 months)") in got
    # the clause says something else, or two values, or nothing new: no reading
    for answer in ("HF safety training is valid for 12 months in Glasgow and costs 6 months of fees at the Suzhou campus.",
                   "HF safety training is valid for 12 months in Glasgow and 6 or 9 months at the Suzhou campus.",
                   "HF safety training is valid for 12 months in Glasgow and for 6 months in Glasgow.",
                   "HF safety training is valid for 12 months in Glasgow and the Suzhou campus is new."):
        assert [f for e, f in _read(rb3, answer) if e == "coordination"] == [], answer
