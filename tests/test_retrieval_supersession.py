"""Retrieval: superseded documents from front matter and from their own banner; source authority."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from retrieval import Retriever, ingest
from retrieval.documents import load_document
from retrieval.records import BANNER_UNRESOLVED
from retrieval.supersession import find_banner

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text,ref", [
    ("> **Note:** This policy has been superseded by the Travel and\n> Expense Policy (2025 edition). More.",
     "the Travel and Expense Policy (2025 edition)"),
    ("Superseded by finance/travel_2025.md.\n\nBody text.", "finance/travel_2025.md"),
    ("# Old policy\n\nStatus: superseded\n\nBody.", None),
    ("This document is no longer in force.", None),
    ("This policy was replaced by hr/leave_2025.md on 1 March.", "hr/leave_2025.md on 1 March"),
    ("【已废止】本制度不再适用。", None),
    ("本办法已被《差旅管理办法（2025年版）》取代。", "《差旅管理办法（2025年版）》"),
    ("本通知作废，请以新通知为准。", None),
])
def test_banner_found_with_what_it_names(text, ref):
    found = find_banner(text, 0)
    assert found is not None and found[1] == ref


@pytest.mark.parametrize("text", [
    "The 2023 policy is superseded by this edition.",  # the new document speaking of the old one
    "This edition replaces the Travel and Expense Policy of 1 January 2023 in full.",
    "Consent can be withdrawn at any time.",
    "本办法自2025年1月1日起施行，原《差旅管理办法》同时废止。",  # repeals another document
    "逾期发票作废。",  # "void" said of invoices, not of this document
    "A" * 700 + "\n\nThis policy has been superseded.",  # too far from the top to be a banner
])
def test_no_banner(text):
    assert find_banner(text, 0) is None


def write(kb: Path, rel: str, text: str) -> None:
    (kb / rel).parent.mkdir(parents=True, exist_ok=True)
    (kb / rel).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def kb_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("supersede")
    kb = root / "kb"
    write(kb, "travel/2025.md", "---\ntitle: Travel Policy (2025 edition)\nauthority: Policy\n---\n# Travel\n\n"
          "The 2023 policy is superseded by this edition. The hotel limit is EUR 180 per night.\n")
    write(kb, "travel/2023.md", "---\ntitle: Travel Policy (2023 edition)\n---\n> **Note:** This policy has been "
          "superseded by the Travel Policy (2025 edition).\n\n# Travel\n\nThe hotel limit is EUR 160 per night.\n")
    write(kb, "hr/leave_2024.md", "# Leave\n\nSuperseded by leave_2025.md.\n\nLeave is 25 days per year.\n")
    write(kb, "hr/leave_2025.md", "---\nauthority: note\n---\n# Leave\n\nLeave is 30 days per year.\n")
    write(kb, "hr/old_remote.md", "# Remote work\n\nThis policy is no longer in force.\n\nRemote work: 2 days.\n")
    write(kb, "zh/old.md", "# 报销制度\n\n本制度已被《不存在的制度》取代。\n\n报销期限为60天。\n")
    write(kb, "hr/fm.md", "---\nsupersedes: hr/banner_conflict.md\n---\n# FM\n\nNew rules.\n")
    write(kb, "hr/banner_conflict.md", "# Old\n\nSuperseded by hr/leave_2025.md.\n\nOld rules.\n")
    # its own front matter says so, and nothing else does (issue 48: an author's `superseded_by:` was not read)
    write(kb, "fin/claims_2023.md", "---\ntitle: Claims 2023\nsuperseded_by: claims_2025.md\n---\n# Claims\n\n"
          "Claims within 60 days.\n")
    write(kb, "fin/claims_2025.md", "---\ntitle: Claims 2025\n---\n# Claims\n\nClaims within 30 days.\n")
    write(kb, "fin/lost.md", "---\nsuperseded_by: Expenses Manual 2030\n---\n# Lost\n\nOld text.\n")
    report = ingest(kb, root / "index", embedder="hashing")
    return kb, root / "index", report


def test_superseded_from_banners_and_front_matter(kb_index):
    kb, idx, report = kb_index
    got = {doc: (by, how) for doc, by, how in report.superseded}
    assert got["travel/2023.md"] == ("travel/2025.md", "banner: 'Note: This policy has been superseded by the "
                                                       "Travel Policy (2025 edition).'")
    assert got["hr/leave_2024.md"][0] == "hr/leave_2025.md"  # named by file name
    assert got["hr/old_remote.md"] == (BANNER_UNRESOLVED, "banner: 'This policy is no longer in force.'")
    assert got["zh/old.md"][0] == BANNER_UNRESOLVED  # names a title that is not in the KB: still superseded
    assert got["hr/banner_conflict.md"] == ("hr/fm.md", "front matter of hr/fm.md")  # front matter wins
    assert got["fin/claims_2023.md"] == ("fin/claims_2025.md", "its own front matter: superseded_by 'claims_2025.md'")
    assert got["fin/lost.md"][0] == BANNER_UNRESOLVED   # names no document of the KB: superseded all the same
    assert any("fin/lost.md: its front matter's superseded_by names 'Expenses Manual 2030'" in w
               for w in report.warnings)
    assert set(got) == {"travel/2023.md", "hr/leave_2024.md", "hr/old_remote.md", "zh/old.md",
                        "hr/banner_conflict.md", "fin/claims_2023.md", "fin/lost.md"}
    # (the 2025 edition's "2023 policy is superseded" is not a banner)
    assert any("zh/old.md: its banner names '《不存在的制度》'" in w for w in report.warnings)
    assert any("hr/banner_conflict.md: its banner names hr/leave_2025.md, front matter says hr/fm.md" in w
               for w in report.warnings)
    r = Retriever.open(idx)
    hits = {p.doc_id: p for p in r.search("hotel limit per night", top_k=5, mode="bm25")}
    assert hits["travel/2023.md"].superseded and hits["travel/2023.md"].superseded_by == "travel/2025.md"
    assert not hits["travel/2025.md"].superseded
    current = r.search("hotel limit per night", top_k=5, mode="bm25", exclude_superseded=True)
    assert [p.doc_id for p in current if p.doc_id.startswith("travel/")] == ["travel/2025.md"]


def test_authority_from_front_matter(kb_index):
    kb, idx, _ = kb_index
    assert load_document(kb, "travel/2025.md").meta.authority == "policy"  # lowercased
    assert load_document(kb, "hr/leave_2024.md").meta.authority is None  # not stated: None
    r = Retriever.open(idx)
    by = {p.doc_id: p.authority for p in r.search("leave days per year", top_k=5, mode="bm25")}
    assert by["hr/leave_2025.md"] == "note" and by["hr/leave_2024.md"] is None


def test_cli_ingest_prints_superseded(kb_index):
    kb, idx, _ = kb_index
    out = subprocess.run([sys.executable, "-m", "api.cli", "ingest", str(kb), "--index", str(idx)],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "superseded: hr/leave_2024.md by hr/leave_2025.md (banner: 'Superseded by leave_2025.md.')" in out.stdout
    assert "superseded: travel/2023.md by travel/2025.md" in out.stdout


@pytest.mark.parametrize("text", [
    # a glossary near the top defines the word; its entry is no banner of the document (issue 48, item 5)
    "# Index\n\n## Glossary\n\n**Current** — a document in force today.\n\n"
    "**Superseded** — a document that has been replaced by a newer version.\n\n**Draft** — not yet approved.",
    "Status definitions:\n- Current: in force.\n- Superseded: replaced by a newer version.\n"
    "- Withdrawn: no longer in force.\n",
])
def test_a_status_glossary_is_no_banner(text):
    assert find_banner(text, 0) is None


@pytest.mark.parametrize("text", [
    # a banner written like a definition stands alone: no sibling entry defines another term
    "> **SUPERSEDED** — This version was replaced by the On-call policy v2 on 1 January 2025.\n\n# On-call\n\nBody.",
    "SUPERSEDED: see hr/new.md.\n\n# Old\n\nBody",
])
def test_a_banner_shaped_like_a_definition_still_counts(text):
    assert find_banner(text, 0) is not None


def test_search_says_why_a_document_counts_as_superseded(kb_index, capsys):
    from api.cli import main
    kb, idx, _report = kb_index
    assert main(["search", "hotel limit", "--index", str(idx), "--json", "--top-k", "10"]) == 0
    import json
    got = {p["doc_id"]: p["superseded_why"] for p in json.loads(capsys.readouterr().out)}
    assert got["travel/2023.md"] == ("banner: 'Note: This policy has been superseded by the Travel Policy "
                                     "(2025 edition).'")
    assert got["travel/2025.md"] is None
