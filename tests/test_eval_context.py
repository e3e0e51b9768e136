"""Context recall (verirag eval --mode context): gold facts found in the retrieved passages vs the prompt."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipeline.evaluation.context_recall import ContextProcessor, context_summary, states
from pipeline.evaluation.dataset import Dataset, SystemItem
from pipeline.evaluation.runner import RunSpec, run_eval
from tests.pipeline_fakes import FakePassage


@pytest.mark.parametrize("text, gold, expected", [
    ("| Tier 1 | EUR 180 |", "EUR 180", True),
    ("| Tier 1 | EUR 1800 |", "EUR 180", False),           # whole values, not substrings
    ("请在两周内提交", "14 days", True),                     # ZH and EN forms of one value
    ("within 14 days", "两周", True),
    ("the Shenzhen office", "Shenzhen", True),              # no value: normalised words
    ("Shenzhenese", "Shenzhen", False),
])
def test_states_compares_normalised_values_and_whole_words(text, gold, expected):
    assert states(text, gold) is expected


def _item(i: str, kind: str, facts: list[tuple[str, str]], support: list[str], language: str = "en") -> SystemItem:
    return SystemItem(id=i, question=f"question {i}?", kind=kind, language=language,
                      gold_facts=[{"subject": s, "relation": "r", "object": o} for s, o in facts], support=support)


def _prepared(retrieved: list[FakePassage], shown: list[FakePassage], tokens: int):
    return SimpleNamespace(retrieved=retrieved, prompt=SimpleNamespace(passages=shown, prompt_tokens=tokens))


def test_a_fact_retrieved_but_cut_from_the_prompt_counts_for_retrieval_only():
    row = FakePassage("finance/travel.md", "| Tier 1 | EUR 180 |", start=100)
    head = FakePassage("finance/travel.md", "The hotel limit per night depends on the tier:", start=40)
    other = FakePassage("hr/leave.md", "Employees get 30 days of annual leave.")
    support = {"finance/travel.md": "The hotel limit per night depends on the tier:\n| Tier 1 | EUR 180 |",
               "hr/leave.md": "Employees get 30 days of annual leave."}
    prepared = {"question a?": _prepared([row, head], [head], 50),
                "question b?": _prepared([other], [other], 30)}
    process = ContextProcessor(lambda q: prepared[q], support)
    # item a also asks for a computed total that no document states: listed, not counted
    a = process(_item("a", "superseded", [("Tier 1", "EUR 180"), ("4 nights", "EUR 720")], ["finance/travel.md"]))
    b = process(_item("b", "answerable", [("employee", "30 days")], ["hr/leave.md"], "zh"))
    assert [(f["groundable"], f["retrieved"], f["in_prompt"]) for f in a["facts"]] == [(True, True, False),
                                                                                       (False, False, False)]
    assert a["support_in_prompt"] == ["finance/travel.md"] and b["facts"][0]["in_prompt"]
    s = context_summary([a, b])
    assert (s["gold_facts"], s["computed_facts"]) == (2, 1)
    assert (s["retrieval_recall"], s["context_recall"], s["support_recall"]) == (1.0, 0.5, 1.0)
    assert s["items_complete_in_prompt"] == 0.5 and s["mean_prompt_tokens"] == 40.0
    assert s["by_kind"]["superseded"]["context_recall"] == 0.0
    assert s["by_language"]["zh"]["context_recall"] == 1.0


def test_context_runs_write_a_context_summary_and_report(tmp_path):
    path = tmp_path / "ds.jsonl"
    path.write_text('{"id": "a", "question": "q?", "kind": "answerable", "gold_answer": "x", '
                    '"gold_facts": [{"subject": "s", "relation": "r", "object": "8 hours"}], "support": ["d.md"], '
                    '"forbidden": []}\n', encoding="utf-8")
    ds = Dataset(str(path), "system", [_item("a", "answerable", [("s", "8 hours")], ["d.md"])])
    p = FakePassage("d.md", "It runs for 8 hours.")
    process = ContextProcessor(lambda q: _prepared([p], [p], 12), {"d.md": "It runs for 8 hours."})
    summary = run_eval(RunSpec(ds, tmp_path / "out", progress=False, mode="context"), process)
    assert summary["kind"] == "context" and summary["context_recall"] == 1.0
    assert "Context recall" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
