"""Product codes as names with no domain rules: a value stated about the LC-220 does not answer about the XR-40,
and the AX-200 manual is not quoted for the LX-500."""
from __future__ import annotations

import pytest

from pipeline.question.codes import asked_codes, capitalised_names, codes, names_a_sibling, names_other_codes
from pipeline.question.focus import parse_question
from pipeline.answers.quoted import quotes
from pipeline_fakes import FakePassage, answer_gap_for, rulebase_of

DATASHEETS = FakePassage("equipment/datasheets.md", "| Property | Value |\n|---|---|\n| Power rating | 3.6 kW |\n"
                         "| Autosampler | 120 samples |\n", 0.9, heading_path=["Tayvale LC-220 liquid chromatograph"])
AX_MANUAL = FakePassage("zh/ax200_manual.md", "专业保养（由诺风或认证服务商执行）：每 2,000 运行小时或每 12 个月，以先到者为准。",
                        0.8, heading_path=["AX-200 自主移动机器人用户手册", "保养周期"])


@pytest.fixture(scope="module")
def bare(tmp_path_factory):          # a rule base declaring no products: the codes are read from the words
    return rulebase_of('type office "office"\n', tmp_path_factory.mktemp("rules"), "none.rules")


def test_codes_are_read_one_way_and_measures_are_not_codes():
    assert codes("The Aldera XR-40 and the XR40; Tayvale LC-220, HG7 staff") == {"XR-40", "LC-220", "HG-7"}
    assert codes("3.6 kW, a 20-character password, ISO 9001, Tier 1, the 2025 policy") == set()
    assert codes("林晓梅（HG9）不能审批 UC-95 的采购") == {"HG-9", "UC-95"}


def test_other_codes_only_name_another_thing(bare):
    focus = parse_question("What is the power rating of the XR-40?", bare)
    assert asked_codes(focus) == {"XR-40"}
    assert names_other_codes({"XR-40"}, "Tayvale LC-220: Power rating 3.6 kW") == "LC-220"
    assert names_other_codes({"XR-40"}, "XR-40 and LC-220 compared") is None
    assert names_other_codes({"XR-40"}, "Power rating 3.6 kW") is None
    assert names_other_codes(set(), "Tayvale LC-220") is None


def test_a_value_stated_about_another_code_does_not_answer(bare):
    # tuning fp-03 with the 135M model and no rule files: verified, and the LC-220's rating
    question = "The Aldera XR-40's autosampler holds 120 samples; what is its power rating?"
    answer = "The Aldera XR-40's autosampler holds 120 samples; its power rating is 3.6 kW [1]."
    assert answer_gap_for(bare, question, answer, [DATASHEETS]) == (
        "its value '3.6 kW' is stated about LC-220, but the question asks about XR-40")
    other = "What is the power rating of the LC-220?"
    assert "stated about" not in (answer_gap_for(bare, other, "The LC-220 is rated at 3.6 kW [1].", [DATASHEETS]) or "")


def test_a_passage_about_another_code_is_not_quoted(bare):
    # shipped un-10 with no rule files: the AX-200 manual quoted for the LX-500
    question = "LX-500 的专业保养周期是多少运行小时？"
    assert quotes(question, parse_question(question, bare), [AX_MANUAL], bare) == []
    question = "AX-200 的专业保养周期是多少运行小时？"
    assert [q.source for q in quotes(question, parse_question(question, bare), [AX_MANUAL], bare)] == [1]


def test_an_answer_about_a_sibling_name_does_not_answer(bare):
    # shipped fp-05 with the 135M model and no rule files: verified, about the other support plan
    question = ("Premium Support is free while a robot is under warranty, so what does Standard Support cost after "
                "the warranty?")
    plans = FakePassage("support/plans.md", "Premium Support costs EUR 3,465 per robot per year. "
                        "Standard Support costs EUR 2,310 per robot per year after the warranty.", 0.9)
    wrong = "Premium Support costs EUR 3,465 per robot per year, during or after the warranty [1]."
    assert answer_gap_for(bare, question, wrong, [plans]) == (
        "it is about Premium Support, but the question asks about Standard Support")
    right = "Standard Support costs EUR 2,310 per robot per year after the warranty [1]."
    assert "Premium" not in (answer_gap_for(bare, question, right, [plans]) or "")


def test_a_title_or_a_shorter_name_is_the_same_name_and_two_asked_names_are_both_asked():
    assert names_a_sibling("Up to what amount can Dr Priya Nair approve?", "Priya Nair may approve GBP 4,500.") is None
    assert names_a_sibling("Does Premium Support include visits, unlike Standard Support?",
                           "Premium Support includes on-site visits.") is None
    assert capitalised_names("The Aldera XR-40 and Northwind Fleet Manager") == {("Northwind Fleet", "Manager")}


def test_an_answer_naming_another_model_of_the_asked_family():
    from pipeline.question.codes import names_another_code
    # blind/08 (an answer written elsewhere, its model code changed): verified for a tug the KB does not have
    assert names_another_code("What is the battery capacity of the Borealis TBL-50 tug?",
                              "The Borealis TBL-101 has a battery capacity of 80 kWh.") == \
        "it is about TBL-101, but the question asks about TBL-50"
    assert names_another_code("Borealis TBL-50 牵引车的保养间隔是多少？", "Borealis TBL-101 的保养间隔为 500 个运行小时。")
    # the asked one named too, another family, or no code asked: nothing said
    assert names_another_code("What is the TBL-50's capacity?", "The TBL-50 has 80 kWh, like the TBL-101.") is None
    assert names_another_code("What is the TBL-50's capacity?", "It has 80 kWh (see form HR-7).") is None
    assert names_another_code("What is the tug's capacity?", "The TBL-101 has 80 kWh.") is None


def test_an_answer_naming_another_code_does_not_answer_a_proved_question(tmp_path):
    # blind/08 /verify: "The Borealis TBL-101 has a battery capacity of 80 kWh" passed for the TBL-50 (its proof
    # says 80 kWh, and the check of a proved question only looked at the rule base's entities)
    from types import SimpleNamespace
    from pipeline.checks.answer_check import answer_gap
    from pipeline.question.focus import Goal
    from pipeline.readers.patterns import extract_claims
    from symbolic import parse_value
    rb = rulebase_of('type tug "tug"\nentity tug tbl50 "Borealis TBL-50" aka "TBL-50"\n'
                     'relation battery(t: tug, e: quantity[kWh]) "battery capacity"\n', tmp_path)
    proof = SimpleNamespace(goal=Goal("battery", ("tbl50",), 1.0), value=parse_value("80 kWh"))
    question = "What is the battery capacity of the Borealis TBL-50 tug?"

    def gap(answer):
        claims, mentions = extract_claims(answer, [], rb)
        return answer_gap(answer, parse_question(question, rb), claims, mentions, rb, proof)
    assert gap("The Borealis TBL-101 has a battery capacity of 80 kWh.") == \
        "it is about TBL-101, but the question asks about TBL-50"
    assert gap("The Borealis TBL-50 has a battery capacity of 80 kWh.") is None
