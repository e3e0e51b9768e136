"""Integrity of the tuning Harbourview domain (eval/tuning/): its KB, its rule files and the grounding of
tuning.jsonl. Unlike the held-out domain it is read and tuned on (eval/tuning/README.md); it makes the same
guarantees, checked by the shared tests in tests/domain_content.py, plus a few of its own below."""
from __future__ import annotations

import re

import pytest

from content_support import mentions
from domain_content import INJECTION, Domain, parametrize_items
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


# ---- checks of this domain's own -------------------------------------------------------------------

def test_the_note_contradicts_the_policy_rather_than_repeating_it():
    assert not mentions(DOMAIN.docs[DOMAIN.policy][1], DOMAIN.note_says)


def test_the_injection_sits_inside_an_ordinary_paragraph():
    body = DOMAIN.docs[DOMAIN.injection_doc][1]
    paragraph = next(p for p in body.split("\n\n") if INJECTION in p)
    before, after = paragraph.split(INJECTION, 1)
    assert before.strip() and after.split(".", 1)[1].strip(), "sentences before and after it"
    assert not paragraph.lstrip().startswith(("#", "|", "-", ">"))


def test_chinese_documents_write_values_in_arabic_and_in_chinese_numerals():
    zh = [body for fm, body in DOMAIN.docs.values() if fm.get("language") == "zh"]
    units = r"(?:元|天|分钟|小时|个月|年|周|册|次|升)"
    assert all(re.search(rf"\d[\d,.]*\s*{units}", body) for body in zh)
    assert all(re.search(rf"[一二两三四五六七八九十百千万]+{units}", body) for body in zh)


def test_gold_answers_are_in_the_language_of_the_question():
    for it in DOMAIN.items:
        if it["gold_answer"]:
            has_cjk = re.search(r"[\u4e00-\u9fff]", it["gold_answer"]) is not None
            assert has_cjk == (it["language"] == "zh"), it["id"]
