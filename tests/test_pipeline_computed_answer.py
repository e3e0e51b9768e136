"""Computed totals: the counts a question states, the rate a source states, their product checked as a draft's
value and delivered, quoted with its rate, where the model gave no verified answer."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig
from pipeline.proof.calculation import (Count, calculate, calculations, one_rate, question_counts, rate_units,
                                        statement_calculations)
from pipeline.answers.computed import computable, computed_answer
from pipeline.text.values import EvidenceValue, ValueMention, find_values
from pipeline.checks.grounding import check_values
from pipeline.question.focus import parse_question
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of
from symbolic.values import Money

LOANS = FakePassage("library/loans.md", (
    "Undergraduates may borrow 15 items at a time. A recalled standard loan that is returned late is charged "
    "GBP 0.35 per item per day. Short loans returned late are charged GBP 1.20 per item per hour."), 0.9,
    heading_path=["Loan rules", "Overdue charges"])
RATES = FakePassage("equipment/xr40.md", (
    "| Property | Value |\n|---|---|\n| List price | GBP 186,500 |\n| Internal booking rate | GBP 38 per hour |\n"
    "| External booking rate | GBP 96 per hour |\n"), 0.8, start=400, heading_path=["Aldera XR-40 diffractometer"])
PER_DIEM = FakePassage("finance/travel.md", (
    "The per diem is EUR 52 for each full travel day and EUR 26 for the day of arrival and the day of "
    "departure."), 0.7, start=900)
TIERS = FakePassage("finance/hotels.md", (
    "The hotel cost per night must not exceed:\n\n| City tier | Limit per night |\n|---|---|\n| Tier 1 | EUR 180 |\n"
    "| Tier 2 | EUR 140 |\n"), 0.7, start=1200)
MEALS_ZH = FakePassage("zh/travel.md", "深圳办公室员工出差期间按出差天数发放伙食补助，每人每天 120 元，不再报销餐费。当天往返的出差按 60 元发放。",
                       0.6, start=1500, heading_path=["伙食补助"])


@pytest.fixture(scope="module")
def rulebase(tmp_path_factory):      # no domain vocabulary: the counts and rates are read from the words alone
    return rulebase_of('type office "office"\n', tmp_path_factory.mktemp("rules"), "none.rules")


def units(text: str) -> list[list[str]]:
    return [rate_units(text, s, e) for v, _k, s, e in find_values(text) if isinstance(v, Money)]


def test_the_counts_a_question_states_are_read_in_english_and_chinese():
    assert question_counts("How much does a 6-hour session cost?") == [Count(6, "hour", "6 hours")]
    assert question_counts("I returned 3 recalled standard loans 4 days late.") == [
        Count(3, "loan", "3 recalled standard loans"), Count(4, "day", "4 days")]
    assert question_counts("What is the most a 4-night hotel stay can cost?") == [Count(4, "night", "4 nights")]
    assert question_counts("深圳员工去成都出差 4 天，伙食补助一共是多少？") == [Count(4, "day", "4 天")]
    assert question_counts("深圳员工到广州出差住 3 晚，住宿费最多可以报销多少？") == [Count(3, "night", "3 晚")]
    assert question_counts("How much is reimbursed for driving 240 km?") == [Count(240, "km", "240 km")]
    assert question_counts("What does hiring two Frostline RT-18 trucks for three nights cost?") == [
        Count(2, "truck", "two Frostline RT-18 trucks"), Count(3, "night", "three nights")]
    assert question_counts("What do five days of training cost?") == [Count(5, "day", "five days")]


def test_spans_of_time_that_date_or_qualify_the_question_count_nothing():
    assert question_counts("An AX-200 delivered 10 months ago needs a repair. What does it cost?") == []
    assert question_counts("What does an employee with 3 years of service get?") == []
    assert question_counts("What is charged for a robot returned within 14 days?") == []


def test_what_a_rate_counts_per_is_read_after_it_and_before_it():
    assert units("late is charged GBP 0.35 per item per day. Short") == [["item", "day"]]
    assert units("Internal booking rate: GBP 38 per hour") == [["hour"]]
    assert units("Tier 1: Limit per night EUR 180") == [["night"]]
    assert units("伙食补助：每人每天 120 元") == [["person", "day"]]
    assert units("reimbursed at EUR 0.35 per kilometre.") == [["km"]]
    # "EUR 26 for the day of arrival": priced by a condition, not per day; the word before it is EUR 52's
    assert units("The per diem is EUR 52 for each full travel day and EUR 26 for the day of arrival") == [["day"], []]
    assert units("The list price is EUR 38,500.") == [[]]


def test_a_total_is_the_rate_times_each_count_it_counts_per():
    loans, days = Count(3, "loan", "3 loans"), Count(4, "day", "4 days")
    calc = calculate(Money(0.35, "GBP"), ["item", "day"], [loans, days])
    assert calc is not None and calc.total == Money(4.2, "GBP") and calc.counts == (loans, days)
    assert calc.how() == "GBP 0.35 per item per day for 3 loans and 4 days = GBP 4.20"
    # a rate per person counts the one asker where the question counts no people
    assert calculate(Money(120, "CNY"), ["person", "day"], [Count(4, "day", "4 天")]).total == Money(480, "CNY")
    # a stipend per month, for a year: twelve months
    assert calculate(Money(4600, "CNY"), ["month"], [Count(1, "year", "一年")]).total == Money(55200, "CNY")


def test_no_total_where_a_unit_has_no_count_or_a_count_is_left_over():
    assert calculate(Money(38, "GBP"), ["hour"], [Count(4, "day", "4 days")]) is None
    assert calculate(Money(38, "GBP"), ["hour"], [Count(6, "hour", "6 hours"), Count(2, "robot", "2 robots")]) is None
    assert calculate(Money(52, "EUR"), ["day"], [Count(3, "day", "3 days"), Count(1, "day", "1 day")]) is None
    assert calculate(Money(38, "GBP"), [], [Count(6, "hour", "6 hours")]) is None


def test_a_sentence_pricing_two_conditions_is_no_single_rate():
    assert not one_rate(PER_DIEM.text, Money(52, "EUR"))
    assert statement_calculations(PER_DIEM.text, [Count(3, "day", "3 days")]) == []
    assert one_rate("Internal booking rate: GBP 38 per hour", Money(38, "GBP"))


def _evidence(passage, value_text):
    start = passage.text.index(value_text)
    value = find_values(value_text)[0][0]
    context = next(line for line in passage.text.split("\n") if value_text in line)
    return EvidenceValue(value, value_text, passage.doc_id, start, start + len(value_text), False, context)


def test_a_drafts_total_is_supported_by_the_calculation_and_a_wrong_one_is_not():
    question = "How much does a 6-hour session on the XR-40 cost at the internal booking rate?"
    evidence = [_evidence(RATES, "GBP 38"), _evidence(RATES, "GBP 96"), _evidence(RATES, "GBP 186,500")]
    calcs = calculations(question, evidence)
    assert sorted(c.total.amount for c in calcs) == [228, 576]
    right = ValueMention(Money(228, "GBP"), "money", "GBP 228", 0, 7, ["equipment/xr40.md"],
                         "The session costs GBP 228 at the internal booking rate")
    wrong = ValueMention(Money(240, "GBP"), "money", "GBP 240", 0, 7, ["equipment/xr40.md"],
                         "The session costs GBP 240 at the internal booking rate")
    ok, bad = check_values([right, wrong], evidence, calcs)
    assert ok.verdict == "supported" and ok.cf == 1.0
    assert ok.explanation.startswith("computed: GBP 38 per hour for 6 hours = GBP 228")
    assert bad.verdict == "unsupported"
    assert check_values([right], evidence)[0].verdict == "unsupported"     # no calculation given: not stated


def answer(question, passages, rulebase):
    found = computed_answer(question, parse_question(question, rulebase), passages, rulebase)
    return found[0] if found else None


def test_the_best_fitting_rate_statement_gives_the_answer_with_its_citation(rulebase):
    assert answer("How much does a 6-hour session at the internal booking rate cost?", [LOANS, RATES], rulebase) == (
        "GBP 228 for 6 hours (Internal booking rate: GBP 38 per hour [2]).")
    assert answer("I returned 3 recalled standard loans 4 days late. How much is the overdue charge?", [LOANS], rulebase) == (
        "GBP 4.20 for 3 recalled standard loans and 4 days (Overdue charges: A recalled standard loan that is "
        "returned late is charged GBP 0.35 per item per day [1]).")
    assert answer("深圳员工去成都出差 4 天，伙食补助一共是多少？", [MEALS_ZH], rulebase) == (
        "4 天共 480 元（深圳办公室员工出差期间按出差天数发放伙食补助，每人每天 120 元，不再报销餐费 [1]）。")


@pytest.mark.parametrize("question", [
    "What is the total per diem for a 3-day trip?",                         # two rates in one sentence
    "What is the most a 4-night hotel stay can cost per city tier limit?",  # two rows fit equally, two totals
    "What do labour and travel cost for a 3-hour repair?",                  # a sum of two charges
    "Can I charge a 6-hour session at the internal booking rate?",          # yes or no
    "How much does a session at the internal booking rate cost?",           # no count
])
def test_no_computed_answer_where_one_rate_times_the_counts_may_not_answer(question, rulebase):
    assert answer(question, [RATES, PER_DIEM, TIERS], rulebase) is None


def test_computable_needs_an_amount_asked_and_a_count_stated(rulebase):
    for q, ok in [("How much does a 6-hour session cost?", True), ("How long is a 6-hour session?", False),
                  ("Who approves a 6-hour session?", False), ("How much does a session cost?", False)]:
        assert computable(q, parse_question(q, rulebase), rulebase) is ok, q


def test_the_loop_delivers_the_computed_total_where_the_model_says_the_documents_do_not_say(rulebase):
    gen = ScriptedGenerator(["The documents do not say."] * 2)
    a = Answerer(gen, FixedRetriever([LOANS, RATES]), rulebase,
                 AnswererConfig(symbolic_answers=False, lm_extraction=False))
    q = "How much does a 6-hour session at the internal booking rate cost?"
    r = a.ask(q)
    assert r.status == "verified" and r.answer.startswith("GBP 228 for 6 hours (")
    last = r.attempts[-1]
    assert last.computed and last.quoted is not None and last.usage["completion_tokens"] == 0
    assert r.reason.startswith(f"the model said the documents do not say; the answer computes the total from the "
                               f"rate source [{last.quoted}] states")
    total = next(c for c in r.claims if c.text == "GBP 228")
    assert total.verdict == "supported" and total.explanation.startswith("computed: GBP 38 per hour for 6 hours")
    events = list(a.ask_stream(q))
    assert [e.get("computed") for e in events if e["type"] == "attempt"] == [None, True]
    off = Answerer(ScriptedGenerator(["The documents do not say."]), FixedRetriever([LOANS, RATES]), rulebase,
                   AnswererConfig(symbolic_answers=False, lm_extraction=False, quote_answers=False))
    assert off.ask(q).status == "abstained"


def test_a_model_draft_with_the_right_total_verifies_and_a_wrong_total_does_not(rulebase):
    q = "How much does a 6-hour session at the internal booking rate cost?"
    right = Answerer(ScriptedGenerator(["A 6-hour session costs GBP 228 at the internal booking rate [2]."]),
                     FixedRetriever([LOANS, RATES]), rulebase,
                     AnswererConfig(symbolic_answers=False, lm_extraction=False, quote_answers=False)).ask(q)
    assert right.status == "verified" and len(right.attempts) == 1
    wrong = Answerer(ScriptedGenerator(["A 6-hour session costs GBP 238 at the internal booking rate [2]."] * 3),
                     FixedRetriever([LOANS, RATES]), rulebase,
                     AnswererConfig(symbolic_answers=False, lm_extraction=False, quote_answers=False)).ask(q)
    assert wrong.status != "verified"


def test_odd_input_gives_no_count_and_no_answer_never_an_error(rulebase):
    assert question_counts("") == [] and question_counts("What does a 0-hour session cost?") == []
    broken = FakePassage("p.md", "| Internal booking rate | GBP 38 per hour\n|---|\n| | |\n", 0.5)
    q = "How much does a 6-hour session at the internal booking rate cost?"
    assert answer(q, [], rulebase) is None
    assert answer(q, [broken], rulebase) is None      # a row with no header row is no statement
    assert calculations(q, []) == []


def test_a_draft_stating_the_rate_as_the_total_fails_and_the_total_is_computed(rulebase):
    # shipped num-10 with the 0.5B model and no rule files: "一共是 120 元", the rate per day, was verified
    q = "深圳员工去成都出差 4 天，伙食补助一共是多少？"
    a = Answerer(ScriptedGenerator(["深圳员工去成都出差 4 天，伙食补助一共是 120 元 [1]。"] * 3), FixedRetriever([MEALS_ZH]),
                 rulebase, AnswererConfig(symbolic_answers=False, lm_extraction=False))
    r = a.ask(q)
    assert "the question counts 4 天, and the answer states the rate per person per day (120 CNY), not its total" \
        in r.attempts[0].gaps
    assert r.status == "verified" and r.attempts[-1].computed and r.answer.startswith("4 天共 480 元（")


def test_what_something_costs_asks_an_amount_of_money_not_a_discount():
    from pipeline.question.answer_types import answer_types
    assert answer_types("What do 10 AX-200 robots cost at list price after the volume discount?") == {"money"}
    assert answer_types("What is the most a 4-night hotel stay in Paris can cost?") == {"money"}
