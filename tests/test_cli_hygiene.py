"""CLI hygiene: defaults that work from any folder, `eval compare --help`, a clear error for an empty rules
folder, `ask --fail-on` exit statuses, and a closed pipe (`| head`) ending quietly."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import build_parser, main
from pipeline.defaults import DEFAULT_KB_DIR, DEFAULT_RULES_DIR
from pipeline.types import AnswerResult

REPO = Path(__file__).resolve().parent.parent
DATASET = REPO / "eval" / "default_domain.jsonl"


def test_eval_defaults_are_the_embedded_domain_from_any_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["eval", str(DATASET)])
    assert Path(args.kb) == DEFAULT_KB_DIR and Path(args.rules) == DEFAULT_RULES_DIR
    assert DEFAULT_KB_DIR.is_absolute() and (DEFAULT_KB_DIR / "finance").is_dir() and any(DEFAULT_RULES_DIR.glob("*.rules"))


def test_rules_commands_default_to_the_embedded_rules_from_any_folder(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)                       # no rules/ here
    assert main(["rules", "check"]) == 0
    assert capsys.readouterr().out.startswith("ok: ")
    assert Path(build_parser().parse_args(["rules", "explain", "p(a, ?x)"]).rules) == DEFAULT_RULES_DIR
    case = tmp_path / "t.yaml"
    case.write_text(f"kb: {DEFAULT_KB_DIR}\ncases:\n  - {{name: hotel ok, expect: supported, claim: "
                    f"'The hotel limit per night in Tier 1 cities is EUR 180.'}}\n", encoding="utf-8")
    assert main(["rules", "test", str(case)]) == 0, capsys.readouterr()


def test_eval_compare_help_is_compares(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["eval", "compare", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: verirag eval compare") and "RUN_A" in out and "--mode" not in out
    assert main(["eval", "compare", "only-one"]) == 2
    assert "usage: verirag eval compare" in capsys.readouterr().err


def test_eval_with_an_empty_rules_folder_is_a_clear_error(tmp_path, capsys) -> None:
    (tmp_path / "rules").mkdir()
    assert main(["eval", str(DATASET), "--rules", str(tmp_path / "rules"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--rules" in err and "no .rules files" in err and "Traceback" not in err


class _Answerer:
    def __init__(self, status: str) -> None:
        self.status = status

    def ask(self, question, options) -> AnswerResult:
        return AnswerResult(question, "The documents do not say.", self.status, [], [], [], [], {},
                            {"prompt_tokens": 1, "completion_tokens": 1})


@pytest.mark.parametrize("status,fail_on,code", [
    ("verified", ["flagged", "abstained"], 0),
    ("flagged", [], 0),
    ("flagged", ["flagged"], 3),
    ("abstained", ["flagged"], 0),
    ("abstained", ["flagged", "abstained"], 4),
])
def test_ask_fail_on_exit_statuses(monkeypatch, capsys, status, fail_on, code) -> None:
    import pipeline

    monkeypatch.setattr(pipeline, "default_answerer", lambda *a, **k: _Answerer(status))
    argv = ["ask", "How long?", "--json"] + [x for s in fail_on for x in ("--fail-on", s)]
    assert main(argv) == code
    assert f'"status": "{status}"' in capsys.readouterr().out


def test_a_closed_pipe_ends_quietly() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "api.cli", "models", "list"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line (`| head -0`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


@pytest.mark.slow
def test_an_installed_wheel_carries_the_default_domain(tmp_path) -> None:
    """Built and unpacked as pip would install it, run from elsewhere: the defaults are its own kb/ and rules/."""
    import zipfile

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "wheel"), str(REPO)], check=True, timeout=600)
    (wheel,) = (tmp_path / "wheel").glob("verirag-*.whl")
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    code = ("from pipeline.defaults import DEFAULT_KB_DIR as k, DEFAULT_RULES_DIR as r; from symbolic import "
            "load_rulebase; print(k); print(r); print(len(load_rulebase(r).rules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    out = done.stdout.split()
    assert out[0] == str(tmp_path / "site" / "pipeline" / "domain" / "kb") and int(out[2]) > 10
    assert (tmp_path / "site/pipeline/domain/kb/finance/travel_expense_2025.md").is_file()
