"""The system run's HTML report: a headline that reads right for every pair of rates (never "reduction ×–"),
and one row per question."""
from __future__ import annotations

import pytest

from pipeline.evaluation.report import headline
from test_eval_runner import FakeAsk, system_run


@pytest.mark.parametrize("plain,verified,met,words", [
    (0.75, 0.0, True, "none among the verified answers"),
    (0.2, 0.1, True, "2.0× fewer"),
    (0.2, 0.15, False, "1.3× fewer"),
    (0.1, 0.2, False, "no reduction (2.0× as many)"),
    (0.0, 0.0, False, "none with or without the verifier"),
    (None, 0.0, None, "no delivered answers to compare"),
])
def test_headline_words(plain, verified, met, words) -> None:
    text = headline({"plain_hallucination_rate": plain, "verified_hallucination_rate": verified,
                     "verified_coverage": 0.5, "target_met": met})
    assert words in text and "×–" not in text and "inf" not in text
    assert {True: "<b>met</b>", False: "<b>not met</b>", None: "<b>not measurable</b>"}[met] in text


def test_report_has_a_row_per_question(tmp_path) -> None:
    s = system_run(tmp_path, FakeAsk())
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    table = html.split("<h2>Per question</h2>")[1].split("</table>")[0]
    assert table.count("<tr>") == s["n"] + 1  # header + one per question
    assert "hallucinated" in table and "abstained (right)" in table and "q1" in table
