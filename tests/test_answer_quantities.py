"""What an answer's amounts count: a total for several things, and the period a value is counted in."""
from __future__ import annotations

import pytest

from pipeline.checks.answer_check import counted_units, value_periods
from pipeline.readers.patterns import extract_claims
from symbolic import load_rulebase
from pipeline_fakes import FakePassage, answer_gap_for

PRICES = FakePassage("sales/prices.md", "The Frostline RT-18 lists at EUR 139,800 per truck, excluding VAT. "
                     "Drivers get a night allowance of EUR 31 per night in Poland.", 0.9)


@pytest.mark.parametrize("question, counted", [
    ("What is the list price of two Frostline RT-18 trucks?", "two Frostline RT-18 trucks"),
    ("A driver spends three nights in Poland. What night allowance does he receive?", "three nights"),
    ("What do 10 AX-200 robots cost at list price?", "10 AX-200 robots"),
    # spans of time qualify, they are not totalled; one is no count; years are no count
    ("How many days of leave with 3 years of service?", None),
    ("Can I return a robot delivered 10 days ago?", None),
    ("What is the resolution target of two business days about?", None),
    ("How long does the LX-500 run on one battery charge?", None),
    ("Which rules changed in 2025 policies?", None),
    ("两辆 RT-18 的价格是多少？", None),     # English only: a Chinese count is not read
])
def test_counted_units(question, counted):
    assert counted_units(question) == counted


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules")
    (d / "t.rules").write_text('type product "product"\nentity product rt_18 "Frostline RT-18" aka "RT-18"\n',
                               encoding="utf-8")
    return load_rulebase(d)


@pytest.mark.parametrize("question, answer, answered", [
    # held-out num-03 with the 135M model: one truck's price for two
    ("What is the list price of two Frostline RT-18 trucks?", "The list price of two Frostline RT-18 trucks is EUR 139,800. [1]",
     False),
    ("What is the list price of two Frostline RT-18 trucks?",
     "One RT-18 lists at EUR 139,800, so two cost EUR 279,600 [1].", True),
    ("A driver spends three nights in Poland. What night allowance does he receive?",
     "He receives a night allowance of EUR 31 [1].", False),
    # asked per night: the one-night amount is the answer
    ("A driver spends three nights in Poland. What night allowance does he receive per night?",
     "He receives a night allowance of EUR 31 per night [1].", True),
    ("What is the list price of the Frostline RT-18?", "The Frostline RT-18 lists at EUR 139,800 [1].", True),
])
def test_a_one_item_amount_does_not_answer_a_total(rb, question, answer, answered):
    gap = answer_gap_for(rb, question, answer, [PRICES])
    assert (gap is None) if answered else ("not the total" in gap)


@pytest.mark.parametrize("answer, expected", [
    ("The reefer unit surcharge per trailer per day is 2.8 L of diesel per hour. [2]", {"hour"}),
    ("The surcharge is EUR 16 per trailer per day [1].", {"trailer", "day"}),   # any word after "per" is a unit
    ("每晚 700 元，3 晚最多报销 2,100 元", {"night"}),
    ("Allowance: EUR 31 per night and EUR 17.50 per day.", {"night", "day"}),
    ("The hotel limit is EUR 180 [1].", set()),
])
def test_the_period_next_to_each_value(rb, answer, expected):
    _claims, mentions = extract_claims(answer, [], rb)
    assert value_periods(answer, mentions) == expected


def test_a_value_per_hour_does_not_answer_per_day_even_when_the_question_is_repeated(rb):
    surcharge = FakePassage("fleet/reefer.md", "The reefer unit uses 2.8 L of diesel per hour. "
                            "The reefer surcharge is EUR 16 per trailer per day.", 0.9)
    question = "How much is the reefer unit surcharge per trailer per day?"

    def gap(answer):
        return answer_gap_for(rb, question, answer, [surcharge])
    # held-out sup-03 with the 135M model
    assert "counts per hour" in gap("The reefer unit surcharge per trailer per day is 2.8 L of diesel per hour. [1]")
    assert gap("The reefer unit surcharge is EUR 16 per trailer per day [1].") is None
