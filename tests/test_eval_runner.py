"""Evaluation runs end to end with a fake pipeline: resume after a crash, summary values, report, CLI."""
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from api.cli import main as cli
from pipeline.evaluation.dataset import DatasetError, load_dataset, select
from pipeline.evaluation.detector import DetectorConfig
from pipeline.evaluation.processors import DetectorProcessor, SystemProcessor, read_support
from pipeline.evaluation.runner import RESULTS, RunError, RunSpec, read_results, run_eval

FIX = Path(__file__).parent / "fixtures" / "eval"


@dataclass
class FakeAttempt:
    answer: str
    abstained: bool = False


@dataclass
class FakeResult:
    answer: str
    status: str
    attempts: list = field(default_factory=list)
    claims: list = field(default_factory=list)


# question id -> (first attempt, final answer, status): the verifier caught q1's wrong first answer
SCRIPT = {
    "How many days of annual leave do full-time employees get?": ("You get 30 days.", "You get 25 days.", "verified"),
    "How many sick days are there?": ("Sick leave is 12 days.", "Sick leave is 10 days.", "regenerated"),
    "What is the parking allowance?": ("Parking is $50 a month.", "The documents do not say.", "abstained"),
    "单笔报销上限是多少？": ("上限是1000元。", "上限是1000元。", "verified"),
}


class FakeAsk:
    def __init__(self, crash_after: int | None = None):
        self.calls: list[str] = []
        self.crash_after = crash_after

    def __call__(self, question: str) -> FakeResult:
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt("simulated crash")
        self.calls.append(question)
        first, final, status = SCRIPT[question]
        return FakeResult(final, status, [FakeAttempt(first)] + ([FakeAttempt(final)] if final != first else []))


def system_run(out: Path, ask: FakeAsk, **kw):
    ds = load_dataset(FIX / "system.jsonl")
    proc = SystemProcessor(ask, read_support(FIX / "kb", ds.items))
    return run_eval(RunSpec(ds, out, progress=False, config={"model": "fake"}, **kw), proc)


def test_system_summary_plain_vs_verified(tmp_path):
    s = system_run(tmp_path, FakeAsk())
    # plain: 4 delivered; q1 (forbidden 30 days), q2 (unsupported 12 days), q3 (answered unanswerable)
    assert s["plain"]["delivered"] == 4 and s["plain"]["hallucination_rate"] == pytest.approx(0.75)
    assert s["plain"]["reasons"] == {"forbidden": 1, "gold_conflict": 2, "unsupported": 3, "answered_unanswerable": 1}
    # verified (status verified only): q1, q4 delivered and clean; q3 abstained correctly
    assert s["verified"]["delivered"] == 2 and s["verified"]["hallucination_rate"] == 0.0
    assert s["passed"]["delivered"] == 3 and s["passed"]["hallucination_rate"] == 0.0  # + regenerated q2
    assert s["verified"]["coverage"] == pytest.approx(0.5) and s["passed"]["coverage"] == pytest.approx(0.75)
    assert s["verified"]["correct_abstention"] == 1.0 and s["plain"]["correct_abstention"] == 0.0
    assert s["verified"]["accuracy"] == pytest.approx(2 / 3) and s["passed"]["accuracy"] == 1.0
    assert s["plain"]["accuracy"] == pytest.approx(1 / 3)
    assert s["status"] == {"verified": 2, "regenerated": 1, "abstained": 1}
    assert s["headline"]["target_met"] is True and s["headline"]["reduction_factor"] == float("inf")
    assert s["plain"]["by_language"]["zh"]["hallucination_rate"] == 0.0
    assert s["plain"]["by_kind"]["unanswerable"]["hallucination_rate"] == 1.0
    rec = read_results(tmp_path / RESULTS)[0]
    assert rec["plain_answer"] == "You get 30 days." and rec["answer"] == "You get 25 days."
    assert {r["type"] for r in rec["plain"]["reasons"]} >= {"forbidden"} and rec["verified"]["reasons"] == []


def test_resume_after_crash_does_no_duplicate_work(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        system_run(tmp_path, FakeAsk(crash_after=2))
    assert [r["id"] for r in read_results(tmp_path / RESULTS)] == ["q1", "q2"]
    # a torn half-written line from the crash is cut off, not parsed
    with (tmp_path / RESULTS).open("a") as fh:
        fh.write('{"id": "q3", "answ')
    ask = FakeAsk()
    s = system_run(tmp_path, ask)
    assert len(ask.calls) == 2 and set(ask.calls) == {"What is the parking allowance?", "单笔报销上限是多少？"}
    ids = [r["id"] for r in read_results(tmp_path / RESULTS)]
    assert sorted(ids) == ["q1", "q2", "q3", "q4"] and s["resumed_items"] == 2
    ask2 = FakeAsk()
    system_run(tmp_path, ask2)                       # a complete run reruns nothing
    assert ask2.calls == [] and len(read_results(tmp_path / RESULTS)) == 4


def test_resume_refuses_a_different_run(tmp_path):
    system_run(tmp_path, FakeAsk(), limit=2)
    with pytest.raises(RunError, match="different run"):
        system_run(tmp_path, FakeAsk(), limit=3)


def test_report_has_plots(tmp_path):
    system_run(tmp_path, FakeAsk())
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") >= 5          # 2 bar charts x kind/language + latency
    assert "Hallucination rate among delivered answers" in html and "q1" not in html.split("passed the verifier")[1][:200]
    ds = load_dataset(FIX / "detector.jsonl")
    out = tmp_path / "det"
    s = run_eval(RunSpec(ds, out, progress=False), DetectorProcessor(DetectorConfig()))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") >= 3 and len(html) > 5000
    c = s["confusion"]
    assert c["tp"] + c["fp"] + c["fn"] + c["tn"] == 6


def test_subset_is_reproducible():
    items = list(range(100))
    assert select(items, 10, 7) == select(items, 10, 7) != select(items, 10, 8)
    assert select(items, 3) == [0, 1, 2] and select(items, None) == items
    assert select(items, 10, 7) == sorted(select(items, 10, 7))
    with pytest.raises(DatasetError, match="at least 1"):
        select(items, 0)


def test_bad_lines_name_the_line(tmp_path):
    with pytest.raises(DatasetError, match=r"bad_label.jsonl:2: invalid detector line: field 'label'"):
        load_dataset(FIX / "bad_label.jsonl")
    with pytest.raises(DatasetError, match=r"bad_json.jsonl:3: not valid JSON"):
        load_dataset(FIX / "bad_json.jsonl")
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": "a", "question": "q", "support": []}\n{"id": "a", "question": "q2", "support": []}\n')
    with pytest.raises(DatasetError, match=r"x.jsonl:2: duplicate id 'a' \(first on line 1\)"):
        load_dataset(p)
    p.write_text('{"id": "a", "foo": 1}\n')
    with pytest.raises(DatasetError, match=r"x.jsonl:1: cannot tell the dataset kind"):
        load_dataset(p)
    p.write_text('{"id": "a", "question": "q", "support": []}\n{"id": "b", "context": "c", "answer": "a", "label": "faithful"}\n')
    with pytest.raises(DatasetError, match=r"x.jsonl:2: a detector line in a system dataset"):
        load_dataset(p)
    p.write_text('{"id": "a", "question": "q", "gold_facts": [{"subject": "s", "relation": "r"}]}\n')
    with pytest.raises(DatasetError, match=r"x.jsonl:1: invalid system line: field 'gold_facts.0.object': Field required"):
        load_dataset(p)
    p.write_text("\n")
    with pytest.raises(DatasetError, match="empty"):
        load_dataset(p)
    with pytest.raises(DatasetError, match="no such dataset"):
        load_dataset(tmp_path / "missing.jsonl")


def test_missing_support_document_is_an_error():
    ds = load_dataset(FIX / "system.jsonl")
    ds.items[0].support = ["hr/nope.md"]
    with pytest.raises(DatasetError, match="'hr/nope.md' is not in the KB"):
        read_support(FIX / "kb", ds.items)


def test_cli_detector_run_and_compare(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli(["eval", str(FIX / "detector.jsonl"), "--out", str(a), "--no-progress"]) == 0
    assert cli(["eval", str(FIX / "detector.jsonl"), "--out", str(b), "--limit", "4", "--seed", "1",
                "--no-progress"]) == 0
    sa = json.loads((a / "summary.json").read_text())
    sb = json.loads((b / "summary.json").read_text())
    assert sa["n"] == 6 and sb["n"] == 4 and len(read_results(b / RESULTS)) == 4
    capsys.readouterr()
    assert cli(["eval", "compare", str(a), str(b / "summary.json")]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("n "))
    assert row.split()[1:] == ["6", "4", "-2"]
    f1 = next(line for line in table.splitlines() if line.startswith("f1 "))
    assert float(f1.split()[3]) == pytest.approx(sb["f1"] - sa["f1"], abs=1e-3)


def test_cli_bad_input_exits_2(tmp_path, capsys):
    assert cli(["eval", str(FIX / "bad_label.jsonl"), "--out", str(tmp_path / "x")]) == 2
    assert "bad_label.jsonl:2" in capsys.readouterr().err
    assert cli(["eval", "compare", str(tmp_path)]) == 2
    assert "usage" in capsys.readouterr().err
    assert cli(["eval", "compare", str(tmp_path / "nope"), str(tmp_path / "nope2")]) == 2
    assert "no summary.json" in capsys.readouterr().err
    assert cli(["eval", str(FIX / "system.jsonl"), "--kb", str(tmp_path / "nokb"), "--out", str(tmp_path / "y")]) == 2
    assert "--kb" in capsys.readouterr().err
