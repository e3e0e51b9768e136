"""bench/withheld.py: the checks that withheld a run's answers, their first drafts counted right or wrong."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import withheld  # noqa: E402


def test_checks_are_named_by_their_leading_words():
    reason = ("withheld a failing answer: 2 claim(s) not supported and 0 rule violation(s); 'X' answers for someone "
              "else: hz.md is about Hangzhou after 3 attempt(s)")
    assert withheld.checks_of(reason) == ["claims not supported", "answers for someone else"]


def test_a_right_first_draft_withheld_counts_against_its_check(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    recs = [{"id": "a", "kind": "answerable", "status": "abstained", "plain": {"correct": True, "hallucinated": False},
             "reason": "withheld a failing answer: it repeats itself after 2 attempt(s)"},
            {"id": "b", "kind": "unanswerable", "status": "abstained", "plain": {"correct": None},
             "reason": "withheld a failing answer: it repeats itself after 1 attempt(s)"},
            {"id": "c", "kind": "answerable", "status": "verified", "plain": {"correct": True}, "reason": "ok"}]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    assert dict(withheld.tally([run])["it repeats itself"]) == {"right": 1, "wrong": 1}
