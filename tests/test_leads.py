"""Passages stating a fact the question asks for lead the prompt's candidates (pipeline.evidence.leads)."""
from __future__ import annotations

import pytest

from pipeline.evidence.gather import gather
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.evidence.leads import lead_first
from pipeline.question.focus import parse_question
from symbolic import load_rulebase
from pipeline_fakes import FakePassage, FixedRetriever

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
relation battery_warranty(product, duration[month]) "battery warranty"
relation list_price(product, money[EUR]) "list price"
pattern P_BATTERY: re"{product}\\s*\\|[^|\\n]*\\|\\s*{m:duration}" -> battery_warranty(product, m)
pattern P_PRICE: "{product} costs {x:money}" -> list_price(product, x)
"""
INTRO = FakePassage("warranty.md", "Northwind warrants every robot and its battery.", 0.9, chunk_id="intro")
PRICE = FakePassage("price.md", "The AX-200 costs EUR 38,500.", 0.8, chunk_id="price")
OTHER = FakePassage("table_lx.md", "| LX-500 | 36 months | 18 months |", 0.7, chunk_id="lx")
TABLE = FakePassage("table_ax.md", "| AX-200 | 24 months | 12 months |", 0.6, chunk_id="ax")


def _rulebase(tmp_path_factory, text: str):
    d = tmp_path_factory.mktemp("rules")
    (d / "t.rules").write_text(text, encoding="utf-8")
    return load_rulebase(d)


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return _rulebase(tmp_path_factory, RULES)


def test_the_passage_stating_the_asked_fact_about_the_named_entity_leads(rb):
    focus = parse_question("How long is the battery warranty of the AX-200?", rb)
    ids = [p.chunk_id for p in lead_first(focus, [INTRO, PRICE, OTHER, TABLE], rb)]
    # the AX-200 row first; the LX-500 row states the relation about another product: no lead
    assert ids == ["ax", "intro", "price", "lx"]


def test_with_no_entity_of_the_subject_type_named_any_subject_leads_in_order(rb):
    focus = parse_question("How long is the battery warranty?", rb)
    assert [p.chunk_id for p in lead_first(focus, [INTRO, PRICE, OTHER, TABLE], rb)] == ["lx", "ax", "intro", "price"]


def test_nothing_asked_or_no_rule_base_keeps_the_order(rb):
    passages = [INTRO, PRICE, OTHER, TABLE]
    assert lead_first(parse_question("Who founded Northwind?", rb), passages, rb) == passages
    assert lead_first(parse_question("How long is the battery warranty?", None), passages, None) == passages


def test_gather_puts_the_leading_passage_first(rb):
    ctx = gather("How long is the battery warranty of the AX-200?", 4, FixedRetriever([INTRO, PRICE, OTHER, TABLE]),
                 rb, KBFactCache())
    assert ctx.candidates[0].chunk_id == "ax" and len(ctx.candidates) == 4


def test_a_passage_in_the_questions_language_leads_over_the_other_editions(rb):
    zh = FakePassage("zh/after_sales.md", "| AX-200 | 24 个月 | 12 months |（电池）", 0.9, chunk_id="zh")
    # an English question: the English row leads, the Chinese edition keeps its retrieval place
    focus = parse_question("How long is the battery warranty of the AX-200?", rb)
    assert [p.chunk_id for p in lead_first(focus, [zh, INTRO, TABLE], rb)] == ["ax", "zh", "intro"]
    # with no lead in the question's language, the other language's leads (an English-only policy)
    assert [p.chunk_id for p in lead_first(focus, [INTRO, zh], rb)] == ["zh", "intro"]


SOFT_RULES = """
type product "product"
entity product fleet "NW Fleet Manager" aka "Fleet Manager"
entity product ax_200 "AX-200"
relation licence_fee(product, money[EUR]) "licence fee per robot per year" aka "许可费"
relation payload(product, quantity[kg]) "rated payload"
"""


@pytest.fixture(scope="module")
def soft_rb(tmp_path_factory):
    return _rulebase(tmp_path_factory, SOFT_RULES)


def test_a_passage_naming_the_asked_relation_with_a_value_of_its_kind_leads_without_a_pattern(soft_rb):
    # no pattern reads this phrasing; the passage uses the relation's whole name, states an amount in its
    # currency and is about the named product by its section heading
    fee = FakePassage("fm.md", "- The licence fee is EUR 1,200 per robot per year.", 0.2, chunk_id="fee",
                      heading_path=["NW Fleet Manager", "Licensing"])
    intro = FakePassage("fm.md", "Fleet Manager plans routes for every robot.", 0.9, chunk_id="intro")
    focus = parse_question("该软件 NW Fleet Manager 每台机器人每年的许可费是多少？", soft_rb)
    assert [p.chunk_id for p in lead_first(focus, [intro, fee], soft_rb)] == ["fee", "intro"]


@pytest.mark.parametrize("text, heading, why", [
    ("- The licence fee is CNY 9,000 per robot per year.", ["NW Fleet Manager"], "another currency"),
    ("- The licence fee is billed per robot per year.", ["NW Fleet Manager"], "no value"),
    ("- The licence fee is EUR 1,200 per robot per year.", ["Route Planner"], "no entity the question names"),
    ("- The fee is EUR 1,200 per robot per year.", ["NW Fleet Manager"], "part of the relation's name"),
])
def test_no_soft_lead_without_name_value_kind_and_entity(soft_rb, text, heading, why):
    p = FakePassage("fm.md", text, 0.2, chunk_id="p", heading_path=heading)
    intro = FakePassage("fm.md", "Fleet Manager plans routes.", 0.9, chunk_id="intro")
    focus = parse_question("What is the licence fee per robot per year of NW Fleet Manager?", soft_rb)
    assert [q.chunk_id for q in lead_first(focus, [intro, p], soft_rb)] == ["intro", "p"], why


def test_a_soft_lead_needs_the_unit_dimension_of_the_relation(soft_rb):
    focus = parse_question("What is the rated payload of the AX-200?", soft_rb)
    kg = FakePassage("ax.md", "AX-200: rated payload 200 kg.", 0.1, chunk_id="kg")
    mm = FakePassage("ax.md", "AX-200: rated payload tested on a 10 mm step.", 0.2, chunk_id="mm")
    intro = FakePassage("ax.md", "The AX-200 is a robot.", 0.9, chunk_id="intro")
    assert [p.chunk_id for p in lead_first(focus, [intro, mm, kg], soft_rb)] == ["kg", "intro", "mm"]
