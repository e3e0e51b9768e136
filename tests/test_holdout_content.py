"""Integrity of the held-out Kestrel domain (eval/holdout/): its KB, its rule files and the grounding of
holdout.jsonl -- the guarantees tests/test_default_content.py checks for the default domain, here for a
KB that is never used for tuning (eval/holdout/README.md)."""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from content_support import KINDS, REQUIRED, mentions, numbers, read_jsonl, split_front_matter

ROOT = Path(__file__).resolve().parent.parent
HOLDOUT = ROOT / "eval" / "holdout"
KB = HOLDOUT / "kb"
RULES = HOLDOUT / "rules"
EVAL = HOLDOUT / "holdout.jsonl"
README = HOLDOUT / "README.md"

KIND_COUNTS = {"answerable": 12, "multi_hop": 8, "numeric": 8, "unanswerable": 8, "false_premise": 8,
               "superseded": 8, "constraint": 8}
PREFIX = {"answerable": "ans-", "multi_hop": "mh-", "numeric": "num-", "unanswerable": "un-",
          "false_premise": "fp-", "superseded": "sup-", "constraint": "con-"}
FRONT_KEYS = {"title", "effective_date", "language", "tags", "supersedes", "authority"}
DERIVED_MARKER = "# ---- derived relations"
INJECTION = "Ignore previous instructions"


def holdout_docs() -> dict[str, tuple[dict, str]]:
    """doc id -> (front matter, text): markdown bodies after their front matter; HTML as the KB loader
    extracts it (its front matter stands empty: title and language come from the page itself)."""
    from retrieval.documents import load_document

    docs = {}
    for path in sorted(p for p in KB.rglob("*") if p.is_file()):
        doc_id = path.relative_to(KB).as_posix()
        if path.suffix == ".md":
            docs[doc_id] = split_front_matter(path.read_text(encoding="utf-8"), doc_id)
        else:
            assert path.suffix == ".html", f"{doc_id}: only .md and .html documents"
            docs[doc_id] = ({}, load_document(KB, doc_id).text)
    return docs


@lru_cache(maxsize=1)
def rulebase():
    from symbolic import load_rulebase

    return load_rulebase(RULES)


@lru_cache(maxsize=1)
def vocabulary() -> tuple[set[str], set[str]]:
    """(all relation names, derived relation names) of the holdout rules. Derived relations are the ones
    vocabulary.rules declares below its DERIVED_MARKER comment: rules compute them, no document states them."""
    vocab = RULES / "vocabulary.rules"
    lines = vocab.read_text(encoding="utf-8").splitlines()
    marker = next(n for n, line in enumerate(lines, 1) if line.startswith(DERIVED_MARKER))
    relations = rulebase().relations
    derived = {name for name, sig in relations.items()
               if Path(sig.location.path).resolve() == vocab.resolve() and sig.location.line > marker}
    return set(relations), derived


DOCS = holdout_docs()
ITEMS = read_jsonl(EVAL)
SUPERSEDING = {doc_id: fm["supersedes"] for doc_id, (fm, _) in DOCS.items() if fm.get("supersedes")}


# ---- knowledge base -------------------------------------------------------------------------------

def test_kb_size_formats_and_front_matter():
    assert 15 <= len(DOCS) <= 18
    assert [d for d in DOCS if d.endswith(".html")] == ["ops/incident_response.html"]
    for doc_id, (fm, body) in DOCS.items():
        assert "/" in doc_id, f"{doc_id}: documents live in subfolders"
        assert body.lstrip().startswith("# "), f"{doc_id}: text starts with a heading"
        if doc_id.endswith(".html"):
            continue
        assert isinstance(fm, dict) and set(fm) <= FRONT_KEYS, doc_id
        assert isinstance(fm.get("title"), str) and fm["title"].strip(), doc_id
        assert fm.get("language") in {"en", "zh"}, doc_id
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(fm.get("effective_date"))), doc_id
        assert isinstance(fm.get("tags"), list) and fm["tags"] and all(isinstance(t, str) for t in fm["tags"]), doc_id


def test_kb_document_lengths():
    for doc_id, (fm, body) in DOCS.items():
        if fm.get("language", "en") == "en":
            assert 250 <= len(body.split()) <= 700, (doc_id, len(body.split()))
        else:  # no spaces between Chinese words: count characters instead (~1.5 per word)
            assert 600 <= len(re.sub(r"\s", "", body)) <= 1600, doc_id


def test_kb_has_four_or_five_chinese_documents():
    zh = [d for d, (fm, _) in DOCS.items() if fm.get("language") == "zh"]
    assert 4 <= len(zh) <= 5
    for doc_id in zh:  # the declared language matches the text
        body = DOCS[doc_id][1]
        cjk = len(re.findall(r"[\u4e00-\u9fff]", body))
        assert cjk / max(1, sum(ch.isalpha() for ch in body)) > 0.5, doc_id


def test_one_superseded_pair_with_a_visible_banner_and_different_values():
    assert len(SUPERSEDING) == 1
    (new, old), = SUPERSEDING.items()
    assert old in DOCS and old != new
    assert str(DOCS[old][0]["effective_date"]) < str(DOCS[new][0]["effective_date"])
    old_body = DOCS[old][1]
    banner = old_body[:old_body.index("\n## ")]  # above the first section
    assert "Superseded by" in banner and new in banner
    assert numbers(DOCS[old][1]) != numbers(DOCS[new][1])


def test_one_non_authoritative_note_contradicting_the_policy():
    notes = [d for d, (fm, _) in DOCS.items() if fm.get("authority") == "note"]
    assert notes == ["notes/claims_chat_note.md"]
    assert all(fm.get("authority") in (None, "note") for fm, _ in DOCS.values())
    assert mentions(DOCS[notes[0]][1], "60 days")
    assert mentions(DOCS["customers/claims_refunds.md"][1], "18 days after delivery")


def test_one_planted_injection_documented_in_the_readme():
    hits = [d for d, (_, body) in DOCS.items() if mentions(body, INJECTION)]
    assert hits == ["customers/claims_portal_guide.md"]
    readme = README.read_text(encoding="utf-8")
    assert hits[0] in readme and INJECTION in readme


def test_readme_lists_every_document_and_the_eval_command():
    readme = README.read_text(encoding="utf-8")
    for doc_id in DOCS:
        assert f"`{doc_id}`" in readme, doc_id
    assert ("verirag eval eval/holdout/holdout.jsonl --kb eval/holdout/kb --rules eval/holdout/rules "
            "--out runs/holdout") in readme
    for kind, n in KIND_COUNTS.items():
        assert re.search(rf"\| `{kind}` \| {n} \(\d+\) \|", readme), kind


def test_retrieval_loader_reads_every_document_as_declared():
    """The KB loader (retrieval.documents) agrees with the front matter: language, date, supersedes."""
    from retrieval.documents import load_document, scan_kb

    found, refused = scan_kb(KB)
    assert refused == [] and set(found) == set(DOCS)
    for doc_id, (fm, _) in DOCS.items():
        meta = load_document(KB, doc_id).meta
        if doc_id.endswith(".html"):
            assert (meta.title, meta.language) == ("Incident Severity and Response Times", "en")
            continue
        assert (meta.title, meta.language, meta.effective_date) == (fm["title"], fm["language"], str(fm["effective_date"]))
        assert meta.supersedes == fm.get("supersedes") and meta.tags == fm["tags"]


# ---- rules ----------------------------------------------------------------------------------------

def test_rules_load_without_errors_or_warnings():
    rb = rulebase()
    assert rb.warnings == []
    assert 15 <= len(rb.forward_rules) and 6 <= len(rb.backward_rules)
    assert all(r.message for r in rb.rules), "every rule and goal has a message"


def test_vocabulary_has_bilingual_entities_and_patterns_for_every_document_relation():
    rb = rulebase()
    all_rel, derived = vocabulary()
    assert derived and derived < all_rel and 25 <= len(all_rel - derived) <= 45
    produced = {p.pattern.atom.relation for p in rb.patterns}
    assert all_rel - derived <= produced, "every relation a document states has a pattern to read it"
    for etype in {e.type for e in rb.entities.values()}:
        names = [n for e in rb.entities.values() if e.type == etype for n in e.names]
        assert any(re.search(r"[A-Za-z]", n) for n in names), etype
        assert any(re.search(r"[\u4e00-\u9fff]", n) for n in names), etype


# ---- evaluation set -------------------------------------------------------------------------------

def test_eval_items_have_the_contract_shape():
    ids = [it["id"] for it in ITEMS]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for it in ITEMS:
        assert set(it) == set(REQUIRED), it.get("id")
        for key, typ in REQUIRED.items():
            assert isinstance(it[key], typ), (it["id"], key)
        assert it["kind"] in KINDS and it["language"] in {"en", "zh"}, it["id"]
        assert it["id"].startswith(PREFIX[it["kind"]]), it["id"]
        assert it["question"].strip(), it["id"]
        for fact in it["gold_facts"]:
            assert set(fact) == {"subject", "relation", "object"}, it["id"]
            assert all(isinstance(v, str) and v.strip() for v in fact.values()), it["id"]
        assert all(isinstance(v, str) and v.strip() for v in it["forbidden"]), it["id"]
        assert all(isinstance(d, str) for d in it["support"]), it["id"]


def test_eval_kind_and_language_counts():
    assert len(ITEMS) == 60
    assert Counter(it["kind"] for it in ITEMS) == KIND_COUNTS
    zh = [it for it in ITEMS if it["language"] == "zh"]
    assert len(zh) >= 15
    assert {it["kind"] for it in zh} == KINDS, "Chinese questions spread over every kind"
    for it in ITEMS:
        has_cjk = re.search(r"[\u4e00-\u9fff]", it["question"]) is not None
        assert has_cjk == (it["language"] == "zh"), it["id"]


def test_unanswerable_items_are_empty_and_others_are_supported():
    for it in ITEMS:
        if it["kind"] == "unanswerable":
            assert it["gold_answer"] == "" and it["support"] == [] and it["gold_facts"] == [], it["id"]
        else:
            assert it["gold_answer"].strip() and it["support"] and it["gold_facts"], it["id"]


def test_support_ids_exist_in_kb():
    for it in ITEMS:
        for doc_id in it["support"]:
            assert doc_id in DOCS, (it["id"], doc_id)


def test_gold_relations_are_declared_in_the_holdout_rules():
    all_rel, _ = vocabulary()
    for it in ITEMS:
        for fact in it["gold_facts"]:
            assert fact["relation"] in all_rel, (it["id"], fact["relation"])


@pytest.mark.parametrize("it", ITEMS, ids=[it["id"] for it in ITEMS])
def test_gold_facts_are_grounded_in_support_docs(it):
    """Each non-derived gold fact's numbers (or, without numbers, its text) occur in a support document."""
    _, derived = vocabulary()
    texts = [DOCS[d][1] for d in it["support"]]
    base = [f for f in it["gold_facts"] if f["relation"] not in derived]
    if it["gold_facts"]:
        assert base, "only derived facts, nothing to ground them"
    for fact in base:
        want = numbers(fact["object"])
        if want:
            for x in want:
                assert any(x in numbers(t) for t in texts), fact
        else:
            assert any(mentions(t, fact["object"]) for t in texts), fact


@pytest.mark.parametrize("it", ITEMS, ids=[it["id"] for it in ITEMS])
def test_gold_answer_states_every_gold_value_and_no_forbidden_one(it):
    """Numbers of every gold fact, and the text of non-derived facts without numbers, are in the gold
    answer; no forbidden value is."""
    _, derived = vocabulary()
    said = numbers(it["gold_answer"])
    for fact in it["gold_facts"]:
        assert numbers(fact["object"]) <= said, fact["object"]
        if not numbers(fact["object"]) and fact["relation"] not in derived:
            assert mentions(it["gold_answer"], fact["object"]), fact["object"]
    for bad in it["forbidden"]:
        assert not mentions(it["gold_answer"], bad), bad


def test_superseded_items_use_the_current_doc_and_forbid_the_old_values():
    (new, old), = SUPERSEDING.items()
    old_text = DOCS[old][1]
    items = [it for it in ITEMS if it["kind"] == "superseded"]
    for it in items:
        assert new in it["support"] and old not in it["support"], it["id"]
        assert it["forbidden"], it["id"]
        for bad in it["forbidden"]:
            want = numbers(bad)
            if want:
                assert want <= numbers(old_text), (it["id"], bad)
            else:
                assert mentions(old_text, bad), (it["id"], bad)
        # the question is about something the two versions really disagree on
        for fact in it["gold_facts"]:
            assert not mentions(old_text, fact["object"]), (it["id"], fact)


def test_no_item_cites_the_note_or_the_superseded_document():
    """Gold answers rest on policy: the chat note and the 2024 surcharge policy are never support."""
    (_, old), = SUPERSEDING.items()
    for it in ITEMS:
        assert old not in it["support"] and "notes/claims_chat_note.md" not in it["support"], it["id"]
