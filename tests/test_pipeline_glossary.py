"""The Chinese-English glossary: a Chinese question or answer names a relation its rule author named in English
only; the author's own names come first, and a malformed glossary line is an error with its position."""
from __future__ import annotations

import pytest

from pipeline.text.glossary import GlossaryError, gloss, glossary, parse_glossary
from pipeline.question.focus import parse_question
from pipeline_fakes import facts_read, rulebase_of

RULES = """
type tier "city tier"
entity tier tier_1 "Tier 1" aka "一类"
entity tier tier_2 "Tier 2" aka "二类"
type city "city"
entity city shanghai "Shanghai" aka "上海"
relation hotel_limit(t: tier, x: money[CNY]) "hotel limit per night"
relation meal_allowance(t: tier, x: money[CNY]) "meal allowance per day"
relation city_tier(c: city, t: tier) "city tier" unique
relation booking_notice(t: tier, d: duration[day]) "advance booking" aka "提前预订天数"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def test_a_glossary_line_is_a_chinese_word_a_tab_and_english_words():
    g = parse_glossary("# travel\n上限\tlimit, maximum\n酒店\thotels\n病假\tsick leave, leave\n")
    assert g == {"上限": (frozenset({"limit"}), frozenset({"maximum"})),
                 "酒店": (frozenset({"hotel"}),),                       # stemmed as names are
                 "病假": (frozenset({"sick", "leave"}),)}               # a sense inside another says the whole
    with pytest.raises(GlossaryError, match=r"^g.tsv:2:1: expected a Chinese word, a tab and its English words"):
        parse_glossary("上限\tlimit\nhotel\t酒店\n", "g.tsv")
    with pytest.raises(GlossaryError, match=r"^g.tsv:1:1:"):
        parse_glossary("上限 limit\n", "g.tsv")


def test_the_shipped_glossary_loads_and_reads_the_longest_word_at_each_place():
    g = glossary()
    assert len(g) >= 300 and all(terms for terms in g.values())
    assert {"hotel", "night", "limit"} <= gloss("每晚酒店住宿上限").terms
    assert "minimum" in gloss("最低").terms and "maximum" not in gloss("最低").terms
    assert gloss("The hotel limit is EUR 140.").terms == frozenset()      # English text says its own words


def test_a_chinese_question_names_a_relation_named_in_english_only(rb):
    focus = parse_question("一类城市每晚酒店住宿上限是多少？", rb)
    assert [(g.relation, g.args) for g in focus.goals][:1] == [("hotel_limit", ("tier_1",))]
    focus = parse_question("二类城市每天的伙食补助是多少？", rb)
    assert [(g.relation, g.args) for g in focus.goals][:1] == [("meal_allowance", ("tier_2",))]


def test_the_relation_that_best_translates_the_chinese_is_read(tmp_path):
    rb = rulebase_of("""
type office "office"
entity office shenzhen "Shenzhen office" aka "深圳办公室"
relation annual_leave(o: office, d: duration[day]) "annual leave"
relation sick_leave(o: office, d: duration[day]) "paid sick leave days"
type tier "city tier"
entity tier tier_2 "Tier 2"
relation hotel_limit(t: tier, x: money[EUR]) "hotel limit per night"
relation hotel_cap(t: tier, x: money[EUR]) "hotel cap of the travel policy"
""", tmp_path)
    # 病假 is "sick leave": "annual leave" says half of it; both names say a word of 每年 / 天
    assert [g.relation for g in parse_question("深圳办公室员工每年有多少天病假？", rb).goals] == ["sick_leave"]
    # 上限 glosses as limit and as cap: "hotel cap" is said whole, yet says less of the question than the other
    assert [g.relation for g in parse_question("出差时 Tier 2 每晚酒店的上限是多少欧元？", rb).goals] == ["hotel_limit"]


def test_the_rule_authors_chinese_name_comes_first(rb):
    # "提前预订天数" is the author's name: the glossary is not consulted, and its English ("advance", "day") does not
    # make the per-day meal allowance a rival
    focus = parse_question("一类城市需要提前预订几天？", rb)
    assert [g.relation for g in focus.goals][:1] == ["booking_notice"]


def test_an_answers_chinese_clause_names_a_relation_named_in_english_only(rb):
    def read(question, answer):
        from pipeline.readers.vocabulary import value_claims
        return facts_read(value_claims, rb, question, answer)
    assert read("一类城市的标准是什么？", "一类城市每晚酒店住宿上限为 700 元。") == ["hotel_limit(tier_1, 700 CNY)"]
    assert read("二类城市的标准是什么？", "二类城市伙食补助每天 100 元。") == ["meal_allowance(tier_2, 100 CNY)"]
    # a clause whose Chinese says neither relation's words reads nothing
    assert read("一类城市的标准是什么？", "一类城市的标准为 700 元。") == []
