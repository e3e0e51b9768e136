"""Integrity of the held-out Kestrel domain (eval/holdout/): its KB, its rule files and the grounding of
holdout.jsonl -- the guarantees tests/test_default_content.py checks for the default domain, here for a
KB that is never used for tuning (eval/holdout/README.md). The checks themselves are in
tests/domain_content.py, shared with the tuning domain (tests/test_tuning_content.py)."""
from __future__ import annotations

import pytest

from domain_content import Domain, parametrize_items
from domain_content import *  # noqa: F401,F403  (the shared test_* functions, collected here)

DOMAIN = Domain(
    folder="eval/holdout", eval_file="holdout.jsonl",
    command="verirag eval eval/holdout/holdout.jsonl --kb eval/holdout/kb --rules eval/holdout/rules --out runs/holdout",
    kind_counts={"answerable": 12, "multi_hop": 8, "numeric": 8, "unanswerable": 8, "false_premise": 8,
                 "superseded": 8, "constraint": 8},
    min_zh_items=15, doc_range=(15, 18),
    html_titles={"ops/incident_response.html": "Incident Severity and Response Times"},
    note="notes/claims_chat_note.md", note_says="60 days",
    policy="customers/claims_refunds.md", policy_says="18 days after delivery",
    injection_doc="customers/claims_portal_guide.md",
    min_forward_rules=15, min_goals=6,
)


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DOMAIN


def pytest_generate_tests(metafunc):
    parametrize_items(metafunc, DOMAIN)
