"""Symbolic totals: a question's own count, distance or period binds a relation's value argument, and a goal
that computes its value answers it with the total and the rates it rests on (eval num-01..10)."""
from __future__ import annotations

import pytest

from pipeline.text.values import find_values
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.readers.premises import stated_premises
from pipeline.question.focus import parse_question
from pipeline.answers.composition import compose
from pipeline.proof.proving import prove
from symbolic.values import parse_value as v
from pipeline_fakes import FakePassage, FixedRetriever, rulebase_of

RULES = """
type tier "city tier"
entity tier tier_1 "Tier 1"
entity tier tier_2 "Tier 2"
type city "city"
entity city london "London"
entity city berlin "Berlin"
entity cn_city guangzhou "广州"
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
relation hotel_limit(t: tier, x: money[EUR]) "hotel limit per night"
relation city_tier(c: city, t: tier) "city tier" unique
relation hotel_limit_for_city(c: city, x: money[EUR]) "hotel limit in a city"
relation stay_cost(city, nights: number, money[EUR]) "hotel stay cost"
relation cn_limit(cn_city, money[CNY]) "住宿标准"
relation cn_stay_cost(cn_city, 晚: number, money[CNY]) "住宿费"
relation mileage_rate(product, money[EUR]) "mileage rate"
relation mileage_paid(distance: quantity[km], money[EUR]) "mileage reimbursement" aka "reimbursed for driving"
relation list_price(product, money[EUR]) "list price"
relation discount(robots: number, percent) "volume discount"
relation order_price(product, robots: number, money[EUR]) "price after the volume discount"
pattern P_ROW: re"{tier}\\s*\\|\\s*{x:money}" -> hotel_limit(tier, x)
pattern P_CITY: "{city} is a {tier} city" -> city_tier(city, tier)
pattern P_PRICE: "{product} costs {x:money}" -> list_price(product, x)
pattern P_CN: "{cn_city} 住宿标准 {x:money}" -> cn_limit(cn_city, x)
fact mileage_rate(ax_200, "EUR 0.35")
fact discount(10, 8%)
goal G_CITY "a city's hotel limit is its tier's limit":
    hotel_limit_for_city(?c, ?x) if city_tier(?c, ?t) and hotel_limit(?t, ?x)
goal G_STAY "a stay costs its nights times the city's limit":
    stay_cost(?c, ?n, ?x * ?n) if hotel_limit_for_city(?c, ?x) and ?n > 0
goal G_CN_STAY "住宿费 = 晚数 × 住宿标准":
    cn_stay_cost(?c, ?n, ?x * ?n) if cn_limit(?c, ?x) and ?n > 0
goal G_MILEAGE "kilometres times the rate":
    mileage_paid(?km, ?r * (?km / 1 km)) if mileage_rate(ax_200, ?r) and ?km > 0 km
goal G_ORDER "list price less the volume discount":
    order_price(?p, ?n, ?x * ?n * (100% - ?d)) if list_price(?p, ?x) and discount(?n, ?d)
"""
OLD = FakePassage("travel_2023.md", "| Tier 1 | EUR 160 |\n| Tier 2 | EUR 120 |", 0.9, superseded=True,
                  superseded_by="travel_2025.md", chunk_id="old")
NEW = FakePassage("travel_2025.md", "| Tier 1 | EUR 180 |\n| Tier 2 | EUR 140 |", 0.8, start=40, chunk_id="new")
TIERS = FakePassage("tiers.md", "Berlin is a Tier 2 city. London is a Tier 1 city.", 0.3, chunk_id="tiers")
PRICE = FakePassage("ax200.md", "The AX-200 costs EUR 38,500.", 0.5, chunk_id="price")
CN = FakePassage("cn.md", "广州 住宿标准 700 元", 0.5, chunk_id="cn")
KB = [OLD, NEW, TIERS, PRICE, CN]


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def answer(rb, question):
    facts = KBFactCache().get(FixedRetriever(KB), rb).facts
    return prove(parse_question(question, rb), rb, facts)


def test_a_question_binds_the_values_it_states_to_value_arguments(rb):
    g = parse_question("What is the most a 4-night hotel stay in Berlin can cost?", rb).goals[0]
    assert (g.relation, g.args, g.score) == ("stay_cost", ("berlin", v("4")), 1.0)
    q = "How much is reimbursed for driving 240 km?"
    (g,) = parse_question(q, rb).goals
    assert g.args == (v("240 km"),) and [q[s:e] for s, e in g.stated] == ["240 km"]
    # a distance is no count, a count no distance: a value of another kind binds nothing
    assert parse_question("What does a 4 kg hotel stay in Berlin cost?", rb).goals == []
    assert parse_question("How much is reimbursed for driving 3 hours?", rb).goals == []
    # without a value of its own, a relation with a value argument is not asked
    assert [g.relation for g in parse_question("What is the hotel stay cost in Berlin?", rb).goals] == []


def test_the_proof_states_the_total_and_the_rates_it_rests_on(rb):
    proof = answer(rb, "What is the most a 4-night hotel stay in Berlin can cost?")
    assert proof.value == v("EUR 560") and proof.node.rule_ids == ["G_STAY", "G_CITY"]
    assert compose(proof, rb, [1], chinese=False) == \
        "The hotel stay cost for Berlin, 4 nights is EUR 560 (hotel limit in a city: EUR 140; city tier: Tier 2) [1]."
    proof = answer(rb, "深圳员工到广州出差住 3 晚，住宿费最多可以报销多少？")
    assert compose(proof, rb, [1], chinese=True) == "广州，3 晚的住宿费为2,100 元（住宿标准：700 元） [1]。"
    assert answer(rb, "How much is reimbursed for driving 240 km?").value == v("EUR 84")


def test_a_total_is_never_mixed_from_superseded_and_current_rates(rb):
    # the superseded EUR 160 for Tier 1 would make a rival total of EUR 640 at half the CF, within the margin
    proof = answer(rb, "What is the most a 4-night hotel stay in London can cost?")
    assert proof.value == v("EUR 720") and proof.rivals == []
    assert {f.provenance.doc_id for f in proof.documents} == {"travel_2025.md", "tiers.md"}


def test_the_goal_using_most_of_what_the_question_names_answers(rb):
    # order_price binds the AX-200 and the count; the discount alone binds the count only
    q = "What do 10 AX-200 robots cost at list price after the volume discount?"
    goals = {g.relation for g in parse_question(q, rb).goals}
    assert goals >= {"order_price", "list_price"} and "discount" not in goals     # what they cost: money
    proof = answer(rb, q)
    assert (proof.goal.relation, proof.value) == ("order_price", v("EUR 354,200"))
    assert answer(rb, "What volume discount applies to an order of 10 robots?").value == v("8%")


def test_a_value_no_goal_binds_still_refuses_a_lookup_proof(rb):
    # "for 3 nights" binds no argument of the per-night limit: the lookup would answer another question
    assert answer(rb, "What is the hotel limit per night in a Tier 1 city for 3 nights?") is None
    assert answer(rb, "What is the most a 4-night hotel stay in Berlin costs for 2 people?") is None


def test_a_value_a_goal_takes_as_input_is_no_premise(rb):
    focus = parse_question("What is the most a 4-night hotel stay in Berlin can cost?", rb)
    assert stated_premises(focus.question, focus, rb) == []


def test_a_bare_yi_is_a_morpheme_not_a_count():
    assert find_values("伙食补助一共是多少？统一标准，唯一的办法") == []
    assert [str(x[0]) for x in find_values("一年，每一天，一百二十元")] == ["1 year", "1 day", "120 CNY"]


def test_a_total_an_answer_states_is_read_as_the_computing_relation_and_checked(rb):
    from pipeline.readers.registry import read_answer
    from symbolic import Verifier
    facts = KBFactCache().get(FixedRetriever(KB), rb).facts

    def totals(question: str, answer: str) -> list:
        claims, _left = read_answer(answer, [], [], parse_question(question, rb), rb)
        return [c for c in claims if c.fact.relation == "stay_cost"]
    q = "What is the most a 4-night hotel stay in Berlin can cost?"
    # the largest fitting value is the total; the nightly rate beside it is not read as one
    (right,) = totals(q, "That is EUR 560 for the stay, at EUR 140 per night [1].")
    assert right.fact.args == ("berlin", v("4"), v("EUR 560")) and right.extractor == "focus"
    (wrong,) = totals(q, "The stay may cost EUR 500 [1].")
    verdicts = [c.verdict for c in Verifier(rb).verify([right, wrong], facts).claims]
    assert verdicts[0] == "supported" and verdicts[1] != "supported"
    # a question with no value of its own computes nothing: no total is read
    assert totals("What is the hotel stay cost in Berlin?", "It is EUR 560 [1].") == []


def test_the_rates_beside_a_total_are_read_as_the_goals_premises(rb):
    from pipeline.readers.registry import read_answer
    from symbolic import Verifier
    q = "How much is reimbursed for driving 240 km?"

    def read(answer: str) -> dict:
        claims, _left = read_answer(answer, [], [], parse_question(q, rb), rb)
        return {c.fact.relation: c for c in claims}
    claims = read("EUR 84, at EUR 0.35 per kilometre [1].")
    assert claims["mileage_paid"].fact.args[-1] == v("EUR 84")
    assert claims["mileage_rate"].fact.args == ("ax_200", v("EUR 0.35"))
    wrong = read("EUR 120, at EUR 0.50 per kilometre [1].")
    verdicts = Verifier(rb).verify([wrong["mileage_paid"], wrong["mileage_rate"]], rb.facts).claims
    assert [c.verdict for c in verdicts] == ["contradicted", "contradicted"]
    # a value not written as a rate is not read as one: "a receipt above EUR 25" is no mileage rate
    assert "mileage_rate" not in read("EUR 84; keep receipts above EUR 25 [1].")


ORDER_RULES = """
type service "translation service"
entity service translation "translation"
relation word_rate(service, money[EUR]) "translation rate per word"
relation rush_fee(service, money[EUR]) "rush surcharge per order"
relation order_cost(words: number, money[EUR]) "translation order cost" aka "cost of translating"
goal G_ORDER_COST "words times the rate plus the rush surcharge":
    order_cost(?n, ?r * ?n + ?f) if word_rate(translation, ?r) and rush_fee(translation, ?f) and ?n > 0
"""


def test_two_rates_of_one_type_are_told_apart_by_their_clauses_or_by_elimination(tmp_path):
    from pipeline.readers.registry import read_answer
    rb = rulebase_of(ORDER_RULES, tmp_path, "order.rules")
    q = "What is the cost of translating 2000 words?"

    def read(answer: str) -> dict:
        claims, _left = read_answer(answer, [], [], parse_question(q, rb), rb)
        return {c.fact.relation: c.fact.args[-1] for c in claims}
    # each value's own clause names its premise: the fee "rush surcharge", the rate "per word"
    assert read("EUR 290: 2000 words at EUR 0.12 per word plus the EUR 50 rush surcharge [1].") == \
        {"order_cost": v("EUR 290"), "word_rate": v("EUR 0.12"), "rush_fee": v("EUR 50")}
    # a rate whose clause names nothing takes the one premise of its type that no other value took
    assert read("EUR 290: EUR 0.12 each, plus the EUR 50 rush surcharge [1].") == \
        {"order_cost": v("EUR 290"), "word_rate": v("EUR 0.12"), "rush_fee": v("EUR 50")}
    # two values naming neither premise, neither written as a rate: no premise is guessed
    assert read("EUR 290: EUR 240 and EUR 50 [1].") == {"order_cost": v("EUR 290")}
