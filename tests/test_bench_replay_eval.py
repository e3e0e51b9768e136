"""bench/replay_eval.py: the tape's call key is the request's messages and sampling; --compare reports every item
whose scored record differs between two runs, timings left out, and exits 1 when one does."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import replay_eval  # noqa: E402


def _run(folder: Path, records: list[dict]) -> Path:
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def test_compare_ignores_timings_and_names_what_differs(tmp_path, capsys):
    a = _run(tmp_path / "a", [{"id": "q1", "answer": "EUR 180", "latency_ms": 5.0, "timings_ms": {"total": 9}},
                              {"id": "q2", "answer": "no"}])
    same = _run(tmp_path / "b", [{"id": "q1", "answer": "EUR 180", "latency_ms": 7.0, "timings_ms": {"total": 3}},
                                 {"id": "q2", "answer": "no"}])
    assert replay_eval.compare(a, same) == 0
    assert capsys.readouterr().out.strip().endswith("0 of 2 items differ")
    other = _run(tmp_path / "c", [{"id": "q1", "answer": "EUR 160"}, {"id": "q2", "answer": "no"}])
    assert replay_eval.compare(a, other) == 1
    out = capsys.readouterr().out
    assert "q1: differs in answer" in out and "1 of 2 items differ" in out


def test_the_call_key_is_the_messages_and_the_sampling():
    sampling = SimpleNamespace(max_tokens=64, temperature=0.0, seed=0, repetition_penalty=1.0, stop=["\n\n"])
    key = replay_eval.call_key([{"role": "user", "content": "q"}], sampling)
    assert key == replay_eval.call_key([{"role": "user", "content": "q"}], sampling)
    assert key != replay_eval.call_key([{"role": "user", "content": "q2"}], sampling)
    assert key != replay_eval.call_key([{"role": "user", "content": "q"}], SimpleNamespace(**{**vars(sampling), "seed": 1}))
