"""Integrity of the tuning Harbourview domain (eval/tuning/): its KB, its rule files and the grounding of
tuning.jsonl. Unlike the held-out domain it is read and tuned on (eval/tuning/README.md); it makes the same
guarantees, checked by the shared tests in tests/domain_content.py, plus a few of its own below."""
from __future__ import annotations

import pytest

from domain_content import (Domain, check_chinese_values_in_both_numerals, check_gold_answers_in_the_question_language,
                            check_injection_inside_an_ordinary_paragraph, check_note_contradicts_rather_than_repeats,
                            parametrize_items)
from domain_content import *  # noqa: F401,F403  (the shared test_* functions, collected here)

DOMAIN = Domain(
    folder="eval/tuning", eval_file="tuning.jsonl",
    command="verirag eval eval/tuning/tuning.jsonl --kb eval/tuning/kb --rules eval/tuning/rules --out runs/tuning",
    kind_counts={"answerable": 6, "multi_hop": 6, "numeric": 6, "unanswerable": 6, "false_premise": 6,
                 "superseded": 6, "constraint": 6},
    min_zh_items=13, doc_range=(14, 16),
    html_titles={"it/accounts_passwords_vpn.html": "IT Accounts, Passwords and VPN Access"},
    note="notes/research_office_chat_note.md", note_says="GBP 10,000",
    policy="finance/research_grant_approvals.md", policy_says="GBP 4,500",
    injection_doc="library/loan_rules.md",
    min_forward_rules=12, min_goals=5,
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


def test_chinese_documents_write_values_in_arabic_and_in_chinese_numerals():
    check_chinese_values_in_both_numerals(DOMAIN, r"(?:元|天|分钟|小时|个月|年|周|册|次|升)")


def test_gold_answers_are_in_the_language_of_the_question():
    check_gold_answers_in_the_question_language(DOMAIN)
