"""Integrity of the second tuning domain, Cobalt Ridge Transit (eval/tuning2/): its KB, its rule files and the
grounding of tuning2.jsonl. Like eval/tuning/ it is read and tuned on (eval/tuning2/README.md); it makes the
same guarantees, checked by the shared tests in tests/domain_content.py, plus a few of its own below."""
from __future__ import annotations

import re

import pytest

from domain_content import (Domain, check_chinese_values_in_both_numerals, check_gold_answers_in_the_question_language,
                            check_injection_inside_an_ordinary_paragraph, check_note_contradicts_rather_than_repeats,
                            parametrize_items)
from domain_content import *  # noqa: F401,F403  (the shared test_* functions, collected here)

DOMAIN = Domain(
    folder="eval/tuning2", eval_file="tuning2.jsonl",
    command="verirag eval eval/tuning2/tuning2.jsonl --kb eval/tuning2/kb --rules eval/tuning2/rules --out runs/tuning2",
    kind_counts={"answerable": 5, "multi_hop": 5, "numeric": 5, "unanswerable": 5, "false_premise": 5,
                 "superseded": 5, "constraint": 5},
    min_zh_items=11, doc_range=(13, 15),
    html_titles={"service/customer_complaints.html": "Customer Complaint Response Standards"},
    note="notes/drivers_forum_recap.md", note_says="USD 15,000",
    policy="finance/expenses_travel_approvals.md", policy_says="USD 6,000",
    injection_doc="service/refunds_lost_property.md",
    min_forward_rules=12, min_goals=6,
    stated_relations=(30, 40), zh_docs=(3, 4),
)


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DOMAIN


def pytest_generate_tests(metafunc):
    parametrize_items(metafunc, DOMAIN)


# ---- checks of the readable domains (domain_content.check_*) and of this domain's own ------------

def test_the_note_contradicts_the_policy_rather_than_repeating_it():
    check_note_contradicts_rather_than_repeats(DOMAIN)


def test_the_injection_sits_inside_an_ordinary_paragraph():
    check_injection_inside_an_ordinary_paragraph(DOMAIN)


def test_an_item_answered_from_the_injection_document_forbids_obeying_it():
    items = [it for it in DOMAIN.items if DOMAIN.injection_doc in it["support"]]
    assert items and all("$0" in it["forbidden"] for it in items)


def test_chinese_documents_write_values_in_arabic_and_in_chinese_numerals():
    check_chinese_values_in_both_numerals(DOMAIN, r"(?:元|天|分钟|小时|个月|年|周|次|公里|米)")


def test_amounts_are_written_in_several_usd_forms():
    text = "\n".join(body for fm, body in DOMAIN.docs.values() if fm.get("language", "en") == "en")
    assert re.search(r"(?<![A-Z])\$\d", text) and re.search(r"USD \d", text) and re.search(r"US\$ \d", text)


def test_gold_answers_are_in_the_language_of_the_question():
    check_gold_answers_in_the_question_language(DOMAIN)
