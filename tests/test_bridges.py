"""Value bridges (pipeline.evidence.bridges): a question that describes an entity by a measured value ("the robot with
±10 mm positioning accuracy") gets the passage stating that value, searched within the documents stating it,
placed behind the first round's best passage."""
from __future__ import annotations

import pytest

from pipeline.evidence.bridges import bridge_passages, documents_stating, place_after, stated_values
from pipeline.evidence.gather import gather
from pipeline.evidence.kb_facts import KBFactCache, KBFacts
from pipeline.evidence.passage_facts import extract_evidence
from symbolic.values import Quantity
from pipeline_fakes import FakePassage, rulebase_of

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
relation warranty_period(product, duration[month]) "robot warranty"
pattern P_WARRANTY: re"{product}\\s*\\|\\s*{d:duration}" -> warranty_period(product, d)
"""
WARRANTY = FakePassage("warranty.md", "| Product | Robot warranty |\n|---|---|\n| AX-200 | 24 months |\n"
                       "| LX-500 | 36 months |", 0.9, chunk_id="warranty")
COVERS = FakePassage("warranty.md", "The warranty covers faulty parts of every robot.", 0.8, start=200, end=248,
                     chunk_id="covers")
AX_INTRO = FakePassage("ax200.md", "The AX-200 is an autonomous mobile robot.", 0.3, chunk_id="ax_intro")
AX_SPECS = FakePassage("ax200.md", "| Positioning accuracy | ± 10 mm |\n| Rated payload | 200 kg |", 0.2,
                       start=100, end=160, chunk_id="ax_specs")
LX_SPECS = FakePassage("lx500.md", "| Positioning accuracy | ± 20 mm |\n| Rated payload | 500 kg |", 0.1,
                       chunk_id="lx_specs")


class DocRetriever:
    """Ranks by the passages' own scores; ``doc_ids`` keeps only those documents (as retrieval.Retriever)."""
    version = "docs"

    def __init__(self, passages, first_k=None):
        self.kb, self.calls = list(passages), []

    def search(self, query, top_k=5, doc_ids=None, **_):
        self.calls.append((query, doc_ids))
        hits = [p for p in sorted(self.kb, key=lambda p: -p.score) if doc_ids is None or p.doc_id in doc_ids]
        return hits[:top_k]

    def passages(self, **_):
        return list(self.kb)

    def __len__(self):
        return len(self.kb)


class NoDocFilter(DocRetriever):
    def search(self, query, top_k=5, **kw):
        if "doc_ids" in kw:
            raise TypeError("search() got an unexpected keyword argument 'doc_ids'")
        return super().search(query, top_k)


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def _kb(passages, rb) -> KBFacts:
    facts, values = extract_evidence(passages, rb)
    return KBFacts(facts, values)


QUESTION = "What is the robot warranty of the Northwind robot with ±10 mm positioning accuracy?"


def test_only_measured_quantities_bridge():
    q = "A robot with ±10 mm accuracy, bought for EUR 500 with 10 % off 8 months ago, carries 200 kg; and ±10 mm?"
    # money, a share and a duration describe the asker's case, not a thing; a repeated value counts once
    assert stated_values(q) == [Quantity(10, "mm"), Quantity(200, "kg")]
    assert stated_values("How long is the robot warranty?") == []


def test_the_passage_stating_the_questions_value_is_found_within_the_documents_stating_it(rb):
    kb_passages = [WARRANTY, COVERS, AX_INTRO, AX_SPECS, LX_SPECS]
    kb = _kb(kb_passages, rb)
    assert documents_stating(Quantity(10, "mm"), kb) == ["ax200.md"]
    retriever = DocRetriever(kb_passages)
    # the AX-200 intro outranks the specs row but does not state 10 mm; the LX-500 states 20 mm
    assert [p.chunk_id for p in bridge_passages(QUESTION, retriever, kb)] == ["ax_specs"]
    assert retriever.calls == [(QUESTION, ["ax200.md"])]


def test_no_bridge_without_the_kbs_values_a_document_filter_or_a_rare_value(rb):
    kb_passages = [WARRANTY, AX_SPECS, LX_SPECS]
    kb = _kb(kb_passages, rb)
    assert bridge_passages(QUESTION, DocRetriever(kb_passages), None) == []
    assert bridge_passages(QUESTION, NoDocFilter(kb_passages), kb) == []
    assert bridge_passages("Which robot is 5 m long?", DocRetriever(kb_passages), kb) == []   # stated nowhere
    common = [FakePassage(f"d{i}.md", "The part is 10 mm wide.", 0.5, chunk_id=f"d{i}") for i in range(4)]
    assert bridge_passages(QUESTION, DocRetriever(common), _kb(common, rb)) == []   # 4 documents state it


def test_place_after_moves_a_passage_up_and_never_repeats_one():
    a, b, c = (FakePassage("x.md", t, start=i, end=i + 1, chunk_id=t) for i, t in enumerate("abc"))
    assert [p.chunk_id for p in place_after([a], [c, a], [b, c])] == ["a", "c", "b"]


def test_gather_places_the_bridge_behind_the_first_rounds_best(rb):
    class FirstRoundOfTwo(DocRetriever):
        def search(self, query, top_k=5, doc_ids=None, **kw):
            # the question alone finds only the warranty policy (as the hybrid search did, eval mh-03)
            return super().search(query, 2 if doc_ids is None else top_k, doc_ids)

    retriever = FirstRoundOfTwo([WARRANTY, COVERS, AX_INTRO, AX_SPECS, LX_SPECS])
    ctx = gather(QUESTION, 2, retriever, rb, KBFactCache())
    ids = [p.chunk_id for p in ctx.candidates]
    assert ids[:3] == ["warranty", "ax_specs", "covers"]
    assert ids.count("ax_specs") == 1
    off = gather(QUESTION, 2, retriever, rb, KBFactCache(), multi_hop=False)
    assert "ax_specs" not in [p.chunk_id for p in off.candidates]


def test_the_quantity_lookup_equals_a_scan_of_the_kbs_values_and_follows_a_new_kb(rb):
    kb = _kb([AX_SPECS, LX_SPECS, FakePassage("zh.md", "定位精度 ±1 cm", chunk_id="zh")], rb)
    for q in (Quantity(10, "mm"), Quantity(200, "kg"), Quantity(7, "kg")):
        scan = list(dict.fromkeys(v.doc_id for v in kb.values if v.value == q))
        assert documents_stating(q, kb) == scan
    assert documents_stating(Quantity(1, "cm"), kb) == ["ax200.md", "zh.md"]     # 1 cm is 10 mm
    other = _kb([LX_SPECS], rb)
    assert documents_stating(Quantity(10, "mm"), other) == []
