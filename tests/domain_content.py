"""Integrity checks shared by the evaluation domains that carry their own KB, rule files and eval set: the
held-out Kestrel domain (eval/holdout/, tests/test_holdout_content.py) and the tuning Harbourview domain
(eval/tuning/, tests/test_tuning_content.py). The guarantees are those tests/test_default_content.py checks
for the default domain; a `Domain` says where one domain lives and what its README promises (item counts,
the HTML page, the note, the injection, the superseded pair).

A test module uses them with

    DOMAIN = Domain(...)
    from domain_content import *          # the test_* functions below, collected in that module

    @pytest.fixture(scope="module")
    def domain():
        return DOMAIN

    def pytest_generate_tests(metafunc):
        parametrize_items(metafunc, DOMAIN)
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pytest

from content_support import KINDS, REQUIRED, check_superseded_items, mentions, numbers, read_jsonl, split_front_matter

ROOT = Path(__file__).resolve().parent.parent
PREFIX = {"answerable": "ans-", "multi_hop": "mh-", "numeric": "num-", "unanswerable": "un-",
          "false_premise": "fp-", "superseded": "sup-", "constraint": "con-"}
FRONT_KEYS = {"title", "effective_date", "language", "tags", "supersedes", "authority"}
DERIVED_MARKER = "# ---- derived relations"
INJECTION = "Ignore previous instructions"


@dataclass(eq=False)
class Domain:
    folder: str                          # relative to the repository root: eval/holdout
    eval_file: str                       # inside the folder: holdout.jsonl
    command: str                         # the eval command line its README gives
    kind_counts: dict[str, int]          # exactly these many items of each kind
    min_zh_items: int                    # at least this many questions in Chinese
    doc_range: tuple[int, int]           # the KB holds between these many documents
    html_titles: dict[str, str]          # every HTML document -> the title its page gives
    note: str                            # the one `authority: note` document
    note_says: str                       # ... states this value
    policy: str                          # the policy document the note contradicts
    policy_says: str                     # ... which states this
    injection_doc: str                   # the one document with the planted injection
    min_forward_rules: int
    min_goals: int
    stated_relations: tuple[int, int] = (25, 45)   # range of relations documents state
    zh_docs: tuple[int, int] = (4, 5)

    @property
    def root(self) -> Path:
        return ROOT / self.folder

    @property
    def kb(self) -> Path:
        return self.root / "kb"

    @property
    def rules(self) -> Path:
        return self.root / "rules"

    @property
    def readme(self) -> str:
        return (self.root / "README.md").read_text(encoding="utf-8")

    @cached_property
    def docs(self) -> dict[str, tuple[dict, str]]:
        """doc id -> (front matter, text): markdown bodies after their front matter; HTML as the KB loader
        extracts it (its front matter stands empty: title and language come from the page itself)."""
        from retrieval.documents import load_document

        docs = {}
        for path in sorted(p for p in self.kb.rglob("*") if p.is_file()):
            doc_id = path.relative_to(self.kb).as_posix()
            if path.suffix == ".md":
                docs[doc_id] = split_front_matter(path.read_text(encoding="utf-8"), doc_id)
            else:
                assert path.suffix == ".html", f"{doc_id}: only .md and .html documents"
                docs[doc_id] = ({}, load_document(self.kb, doc_id).text)
        return docs

    @cached_property
    def items(self) -> list[dict]:
        return read_jsonl(self.root / self.eval_file)

    @cached_property
    def superseding(self) -> dict[str, str]:
        return {doc_id: fm["supersedes"] for doc_id, (fm, _) in self.docs.items() if fm.get("supersedes")}

    @cached_property
    def rulebase(self):
        from symbolic import load_rulebase

        return load_rulebase(self.rules)

    @cached_property
    def vocabulary(self) -> tuple[set[str], set[str]]:
        """(all relation names, derived relation names) of the domain's rules. Derived relations are the
        ones vocabulary.rules declares below its DERIVED_MARKER comment: rules compute them, no document
        states them."""
        vocab = self.rules / "vocabulary.rules"
        lines = vocab.read_text(encoding="utf-8").splitlines()
        marker = next(n for n, line in enumerate(lines, 1) if line.startswith(DERIVED_MARKER))
        relations = self.rulebase.relations
        derived = {name for name, sig in relations.items()
                   if Path(sig.location.path).resolve() == vocab.resolve() and sig.location.line > marker}
        return set(relations), derived


def parametrize_items(metafunc, domain: Domain) -> None:
    """Run every test taking `it` once per eval item, named by the item's id."""
    if "it" in metafunc.fixturenames:
        metafunc.parametrize("it", domain.items, ids=[it["id"] for it in domain.items])


# ---- knowledge base -------------------------------------------------------------------------------

def test_kb_size_formats_and_front_matter(domain):
    low, high = domain.doc_range
    assert low <= len(domain.docs) <= high
    assert [d for d in domain.docs if d.endswith(".html")] == sorted(domain.html_titles)
    for doc_id, (fm, body) in domain.docs.items():
        assert "/" in doc_id, f"{doc_id}: documents live in subfolders"
        assert body.lstrip().startswith("# "), f"{doc_id}: text starts with a heading"
        if doc_id.endswith(".html"):
            continue
        assert isinstance(fm, dict) and set(fm) <= FRONT_KEYS, doc_id
        assert isinstance(fm.get("title"), str) and fm["title"].strip(), doc_id
        assert fm.get("language") in {"en", "zh"}, doc_id
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(fm.get("effective_date"))), doc_id
        assert isinstance(fm.get("tags"), list) and fm["tags"] and all(isinstance(t, str) for t in fm["tags"]), doc_id


def test_kb_document_lengths(domain):
    for doc_id, (fm, body) in domain.docs.items():
        if fm.get("language", "en") == "en":
            assert 250 <= len(body.split()) <= 700, (doc_id, len(body.split()))
        else:  # no spaces between Chinese words: count characters instead (~1.5 per word)
            assert 600 <= len(re.sub(r"\s", "", body)) <= 1600, doc_id


def test_kb_has_its_chinese_documents(domain):
    zh = [d for d, (fm, _) in domain.docs.items() if fm.get("language") == "zh"]
    low, high = domain.zh_docs
    assert low <= len(zh) <= high
    for doc_id in zh:  # the declared language matches the text
        body = domain.docs[doc_id][1]
        cjk = len(re.findall(r"[\u4e00-\u9fff]", body))
        assert cjk / max(1, sum(ch.isalpha() for ch in body)) > 0.5, doc_id


def test_one_superseded_pair_with_a_visible_banner_and_different_values(domain):
    assert len(domain.superseding) == 1
    (new, old), = domain.superseding.items()
    docs = domain.docs
    assert old in docs and old != new
    assert str(docs[old][0]["effective_date"]) < str(docs[new][0]["effective_date"])
    old_body = docs[old][1]
    banner = old_body[:old_body.index("\n## ")]  # above the first section
    assert "Superseded by" in banner and new in banner
    assert numbers(docs[old][1]) != numbers(docs[new][1])


def test_one_non_authoritative_note_contradicting_the_policy(domain):
    docs = domain.docs
    notes = [d for d, (fm, _) in docs.items() if fm.get("authority") == "note"]
    assert notes == [domain.note]
    assert all(fm.get("authority") in (None, "note") for fm, _ in docs.values())
    assert mentions(docs[notes[0]][1], domain.note_says)
    assert mentions(docs[domain.policy][1], domain.policy_says)


def test_one_planted_injection_documented_in_the_readme(domain):
    hits = [d for d, (_, body) in domain.docs.items() if mentions(body, INJECTION)]
    assert hits == [domain.injection_doc]
    readme = domain.readme
    assert hits[0] in readme and INJECTION in readme


def test_readme_lists_every_document_and_the_eval_command(domain):
    readme = domain.readme
    for doc_id in domain.docs:
        assert f"`{doc_id}`" in readme, doc_id
    assert domain.command in readme
    for kind, n in domain.kind_counts.items():
        assert re.search(rf"\| `{kind}` \| {n} \(\d+\) \|", readme), kind


def test_retrieval_loader_reads_every_document_as_declared(domain):
    """The KB loader (retrieval.documents) agrees with the front matter: language, date, supersedes."""
    from retrieval.documents import load_document, scan_kb

    found, refused = scan_kb(domain.kb)
    assert refused == [] and set(found) == set(domain.docs)
    for doc_id, (fm, _) in domain.docs.items():
        meta = load_document(domain.kb, doc_id).meta
        if doc_id.endswith(".html"):
            assert (meta.title, meta.language) == (domain.html_titles[doc_id], "en")
            continue
        assert (meta.title, meta.language, meta.effective_date) == (fm["title"], fm["language"], str(fm["effective_date"]))
        assert meta.supersedes == fm.get("supersedes") and meta.tags == fm["tags"]


# ---- rules ----------------------------------------------------------------------------------------

def test_rules_load_without_errors_or_warnings(domain):
    rb = domain.rulebase
    assert rb.warnings == []
    assert domain.min_forward_rules <= len(rb.forward_rules) and domain.min_goals <= len(rb.backward_rules)
    assert all(r.message for r in rb.rules), "every rule and goal has a message"


def test_vocabulary_has_bilingual_entities_and_patterns_for_every_document_relation(domain):
    rb = domain.rulebase
    all_rel, derived = domain.vocabulary
    low, high = domain.stated_relations
    assert derived and derived < all_rel and low <= len(all_rel - derived) <= high
    produced = {p.pattern.atom.relation for p in rb.patterns}
    assert all_rel - derived <= produced, "every relation a document states has a pattern to read it"
    for etype in {e.type for e in rb.entities.values()}:
        names = [n for e in rb.entities.values() if e.type == etype for n in e.names]
        assert any(re.search(r"[A-Za-z]", n) for n in names), etype
        assert any(re.search(r"[\u4e00-\u9fff]", n) for n in names), etype


# ---- evaluation set -------------------------------------------------------------------------------

def test_eval_items_have_the_contract_shape(domain):
    ids = [it["id"] for it in domain.items]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for it in domain.items:
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


def test_eval_kind_and_language_counts(domain):
    items = domain.items
    assert len(items) == sum(domain.kind_counts.values())
    assert Counter(it["kind"] for it in items) == domain.kind_counts
    zh = [it for it in items if it["language"] == "zh"]
    assert len(zh) >= domain.min_zh_items
    assert {it["kind"] for it in zh} == KINDS, "Chinese questions spread over every kind"
    for it in items:
        has_cjk = re.search(r"[\u4e00-\u9fff]", it["question"]) is not None
        assert has_cjk == (it["language"] == "zh"), it["id"]


def test_unanswerable_items_are_empty_and_others_are_supported(domain):
    for it in domain.items:
        if it["kind"] == "unanswerable":
            assert it["gold_answer"] == "" and it["support"] == [] and it["gold_facts"] == [], it["id"]
        else:
            assert it["gold_answer"].strip() and it["support"] and it["gold_facts"], it["id"]


def test_support_ids_exist_in_kb(domain):
    for it in domain.items:
        for doc_id in it["support"]:
            assert doc_id in domain.docs, (it["id"], doc_id)


def test_gold_relations_are_declared_in_the_domain_rules(domain):
    all_rel, _ = domain.vocabulary
    for it in domain.items:
        for fact in it["gold_facts"]:
            assert fact["relation"] in all_rel, (it["id"], fact["relation"])


def test_gold_facts_are_grounded_in_support_docs(domain, it):
    """Each non-derived gold fact's numbers (or, without numbers, its text) occur in a support document."""
    _, derived = domain.vocabulary
    texts = [domain.docs[d][1] for d in it["support"]]
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


def test_gold_answer_states_every_gold_value_and_no_forbidden_one(domain, it):
    """Numbers of every gold fact, and the text of non-derived facts without numbers, are in the gold
    answer; no forbidden value is."""
    _, derived = domain.vocabulary
    said = numbers(it["gold_answer"])
    for fact in it["gold_facts"]:
        assert numbers(fact["object"]) <= said, fact["object"]
        if not numbers(fact["object"]) and fact["relation"] not in derived:
            assert mentions(it["gold_answer"], fact["object"]), fact["object"]
    for bad in it["forbidden"]:
        assert not mentions(it["gold_answer"], bad), bad


def test_superseded_items_use_the_current_doc_and_forbid_the_old_values(domain):
    check_superseded_items(domain.items, domain.docs, domain.superseding)


def test_no_item_cites_the_note_or_the_superseded_document(domain):
    """Gold answers rest on policy: the chat note and the superseded document are never support."""
    (_, old), = domain.superseding.items()
    for it in domain.items:
        assert old not in it["support"] and domain.note not in it["support"], it["id"]


__all__ = ["Domain", "parametrize_items"] + [name for name in dir() if name.startswith("test_")]


# ---- checks the readable domains (eval/tuning, eval/tuning2) make beyond the shared ones; each test file
# calls them for its own Domain, the held-out domain does not ---------------------------------------------

def check_note_contradicts_rather_than_repeats(domain: Domain) -> None:
    assert not mentions(domain.docs[domain.policy][1], domain.note_says)


def check_injection_inside_an_ordinary_paragraph(domain: Domain) -> None:
    body = domain.docs[domain.injection_doc][1]
    paragraph = next(p for p in body.split("\n\n") if INJECTION in p)
    before, after = paragraph.split(INJECTION, 1)
    assert before.strip() and after.split(".", 1)[1].strip(), "sentences before and after it"
    assert not paragraph.lstrip().startswith(("#", "|", "-", ">"))


def check_chinese_values_in_both_numerals(domain: Domain, units: str) -> None:
    """Every Chinese document writes a value in Arabic and one in Chinese numerals, with one of ``units``."""
    zh = [body for fm, body in domain.docs.values() if fm.get("language") == "zh"]
    assert all(re.search(rf"\d[\d,.]*\s*{units}", body) for body in zh)
    assert all(re.search(rf"[一二两三四五六七八九十百千万]+{units}", body) for body in zh)


def check_gold_answers_in_the_question_language(domain: Domain) -> None:
    for it in domain.items:
        if it["gold_answer"]:
            has_cjk = re.search(r"[\u4e00-\u9fff]", it["gold_answer"]) is not None
            assert has_cjk == (it["language"] == "zh"), it["id"]
