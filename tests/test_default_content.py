"""Integrity of the embedded default domain: kb/ front matter, the superseded pair, and the eval set's grounding."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from content_support import KINDS, REQUIRED, check_superseded_items, mentions, numbers, read_jsonl, split_front_matter

ROOT = Path(__file__).resolve().parent.parent
KB = ROOT / "kb"
EVAL = ROOT / "eval" / "default_domain.jsonl"
KB_README = ROOT / "docs" / "default_domain.md"


def kb_docs() -> dict[str, tuple[dict, str]]:
    """doc id -> (front matter, body) for every KB document (the folder README is not a document)."""
    docs = {}
    for path in sorted(KB.rglob("*.md")):
        if path == KB_README:
            continue
        doc_id = path.relative_to(KB).as_posix()
        docs[doc_id] = split_front_matter(path.read_text(encoding="utf-8"), doc_id)
    return docs


def vocabulary() -> tuple[set[str], set[str]]:
    """(all relation names, derived relation names) declared in docs/default_domain.md's Vocabulary section."""
    text = KB_README.read_text(encoding="utf-8")
    vocab = text.split("## Vocabulary", 1)[1]
    derived = vocab.split("### Derived relations", 1)[1]
    names = re.compile(r"`([a-z][a-z0-9_]*)\(")
    return set(names.findall(vocab)), set(names.findall(derived))


def eval_items() -> list[dict]:
    return read_jsonl(EVAL)


DOCS = kb_docs()
ITEMS = eval_items()
SUPERSEDING = {doc_id: fm["supersedes"] for doc_id, (fm, _) in DOCS.items() if fm.get("supersedes")}


def test_numbers_helper_normalises_separators_and_decimals():
    assert numbers("EUR 38,500 and 0.35 per km, 2.0 m/s, 1,150 × 780") == {38500, 0.35, 2, 1150, 780}
    assert 18 not in numbers("EUR 180")


def test_mentions_matches_whole_values_only():
    assert mentions("up to EUR 75 per\nperson", "EUR 75") and not mentions("above EUR 750", "EUR 75")
    assert not mentions("a 25 % credit", "5 %") and mentions("a 5 % credit", "5 %")
    assert not mentions("EUR 1,000.50", "EUR 1,000") and mentions("需 12 天。", "12 天")


# ---- knowledge base -------------------------------------------------------------------------------

def test_kb_size_and_front_matter():
    assert 16 <= len(DOCS) <= 20
    for doc_id, (fm, body) in DOCS.items():
        assert isinstance(fm, dict), doc_id
        assert isinstance(fm.get("title"), str) and fm["title"].strip(), doc_id
        assert fm.get("language") in {"en", "zh"}, doc_id
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(fm.get("effective_date"))), doc_id
        assert isinstance(fm.get("tags"), list) and fm["tags"] and all(isinstance(t, str) for t in fm["tags"]), doc_id
        assert set(fm) <= {"title", "effective_date", "language", "tags", "supersedes", "authority"}, doc_id
        assert fm.get("authority") in (None, "note"), doc_id   # only the planted chat note is non-authoritative
        assert "/" in doc_id, f"{doc_id}: documents live in subfolders"
        assert body.lstrip().startswith("# "), f"{doc_id}: body starts with a heading"


def test_kb_document_lengths():
    for doc_id, (fm, body) in DOCS.items():
        if fm["language"] == "en":
            assert 250 <= len(body.split()) <= 700, (doc_id, len(body.split()))
        else:  # no spaces between Chinese words: count characters instead (~1.5 per word)
            assert 600 <= len(re.sub(r"\s", "", body)) <= 1600, doc_id


def test_kb_languages():
    zh = [d for d, (fm, body) in DOCS.items() if fm["language"] == "zh"]
    assert len(zh) >= 3
    for doc_id in zh:  # the declared language matches the text
        body = DOCS[doc_id][1]
        cjk = len(re.findall(r"[\u4e00-\u9fff]", body))
        assert cjk / max(1, sum(ch.isalpha() for ch in body)) > 0.5, doc_id


def test_exactly_one_superseded_pair_resolving_to_an_older_doc():
    assert len(SUPERSEDING) == 1
    (new, old), = SUPERSEDING.items()
    assert old in DOCS and old != new
    assert str(DOCS[old][0]["effective_date"]) < str(DOCS[new][0]["effective_date"])
    # the two versions disagree on the hotel limits: that is what makes the pair worth testing
    assert numbers(DOCS[old][1]) != numbers(DOCS[new][1])


def test_injection_document_present_and_documented():
    hits = [d for d, (_, body) in DOCS.items() if mentions(body, "Ignore previous instructions")]
    assert hits == ["finance/expense_submission_guide.md"]
    assert hits[0] in KB_README.read_text(encoding="utf-8")


def test_readme_lists_every_document_and_enough_constraints():
    readme = KB_README.read_text(encoding="utf-8")
    for doc_id in DOCS:
        assert f"`{doc_id}`" in readme, doc_id
    constraints = readme.split("## Constraints", 1)[1].split("## Vocabulary", 1)[0]
    assert len(re.findall(r"^\d+\. ", constraints, re.M)) >= 25
    all_rel, derived = vocabulary()
    assert derived < all_rel and len(all_rel - derived) >= 40
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", r) for r in all_rel)


# ---- evaluation set -------------------------------------------------------------------------------

def test_eval_items_have_the_contract_shape():
    assert len(ITEMS) >= 60
    ids = [it["id"] for it in ITEMS]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for it in ITEMS:
        assert set(it) == set(REQUIRED), it.get("id")
        for key, typ in REQUIRED.items():
            assert isinstance(it[key], typ), (it["id"], key)
        assert it["kind"] in KINDS and it["language"] in {"en", "zh"}, it["id"]
        assert it["question"].strip(), it["id"]
        for fact in it["gold_facts"]:
            assert set(fact) == {"subject", "relation", "object"}, it["id"]
            assert all(isinstance(v, str) and v.strip() for v in fact.values()), it["id"]
        assert all(isinstance(v, str) and v.strip() for v in it["forbidden"]), it["id"]
        assert all(isinstance(d, str) for d in it["support"]), it["id"]


def test_eval_kind_and_language_coverage():
    kinds = Counter(it["kind"] for it in ITEMS)
    assert set(kinds) == KINDS and min(kinds.values()) >= 8, kinds
    zh = [it for it in ITEMS if it["language"] == "zh"]
    assert len(zh) >= 20
    assert len({it["kind"] for it in zh}) == len(KINDS), "Chinese questions spread over every kind"
    for it in zh:
        assert re.search(r"[\u4e00-\u9fff]", it["question"]), it["id"]


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


def test_gold_relations_are_in_the_vocabulary():
    all_rel, _ = vocabulary()
    for it in ITEMS:
        for fact in it["gold_facts"]:
            assert fact["relation"] in all_rel, (it["id"], fact["relation"])


def test_gold_facts_are_grounded_in_support_docs():
    """Each non-derived gold fact's numbers (or, without numbers, its text) occur in a support document."""
    _, derived = vocabulary()
    for it in ITEMS:
        texts = [DOCS[d][1] for d in it["support"]]
        base = [f for f in it["gold_facts"] if f["relation"] not in derived]
        if it["gold_facts"]:
            assert base, f"{it['id']}: only derived facts, nothing to ground them"
        for fact in base:
            want = numbers(fact["object"])
            if want:
                for x in want:
                    assert any(x in numbers(t) for t in texts), (it["id"], fact)
            else:
                assert any(mentions(t, fact["object"]) for t in texts), (it["id"], fact)


def test_gold_answer_states_every_gold_value():
    """Numbers of every gold fact, and the text of non-derived facts without numbers, are in the gold answer."""
    _, derived = vocabulary()
    for it in ITEMS:
        said = numbers(it["gold_answer"])
        for fact in it["gold_facts"]:
            assert numbers(fact["object"]) <= said, (it["id"], fact["object"])
            if not numbers(fact["object"]) and fact["relation"] not in derived:
                assert mentions(it["gold_answer"], fact["object"]), (it["id"], fact["object"])


def test_forbidden_values_are_never_in_the_gold_answer():
    for it in ITEMS:
        for bad in it["forbidden"]:
            assert not mentions(it["gold_answer"], bad), (it["id"], bad)


def test_superseded_items_use_the_current_doc_and_forbid_the_old_values():
    check_superseded_items(ITEMS, DOCS, SUPERSEDING)


def test_retrieval_loader_reads_every_document_as_declared():
    """The KB loader (retrieval.documents) agrees with the front matter: language, date, supersedes."""
    from retrieval.documents import load_document, scan_kb

    found, refused = scan_kb(KB)
    assert refused == [] and set(DOCS) <= set(found)
    for doc_id, (fm, _) in DOCS.items():
        meta = load_document(KB, doc_id).meta
        assert (meta.title, meta.language, meta.effective_date) == (fm["title"], fm["language"], str(fm["effective_date"]))
        assert meta.supersedes == fm.get("supersedes") and meta.tags == fm["tags"]
