"""`verirag ask` rejects bad input with a clear message, before loading any model."""
from __future__ import annotations

import pytest

from api.cli import main


@pytest.mark.parametrize("argv, message", [
    (["ask", ""], "question must not be empty"),
    (["ask", "x" * 4001], "the limit is 4000"),
    (["ask", "ok?", "--top-k", "0"], "top_k"),
    (["ask", "ok?", "--max-tokens", "0"], "max_tokens"),
])
def test_ask_bad_input(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_ask_bad_policy_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["ask", "ok?", "--policy", "maybe"])
    assert exc.value.code == 2 and "invalid choice: 'maybe'" in capsys.readouterr().err


def test_ask_missing_rules_folder(tmp_path, capsys):
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("Staff get 25 days of annual leave.", encoding="utf-8")
    code = main(["ask", "leave?", "--kb", str(tmp_path / "kb"), "--rules", str(tmp_path / "nope"),
                 "--index", str(tmp_path / "idx")])
    assert code == 2 and "rules folder not found" in capsys.readouterr().err
