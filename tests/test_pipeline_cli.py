"""`verirag ask` rejects bad input with a clear message, before loading any model."""
from __future__ import annotations

import pytest

from api.cli import main


@pytest.mark.parametrize("argv, message", [
    (["ask", ""], "question must not be empty"),
    (["ask", "x" * 4001], "the limit is 4000"),
    (["ask", "ok?", "--top-k", "0"], "top_k"),
    (["ask", "ok?", "--max-tokens", "0"], "max_tokens"),
    (["ask", "ok?", "--speculative-tokens", "-1"], "speculative_tokens must be an integer in 0..16"),
    (["ask", "ok?", "--speculative-tokens", "17"], "speculative_tokens must be an integer in 0..16"),
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


def test_default_answerer_engine_speculates_unless_turned_off(tmp_path, monkeypatch):
    import neural
    from pipeline import default_answerer
    from pipeline.defaults import DEFAULT_RULES_DIR, DEFAULT_SPECULATIVE_TOKENS

    built = []

    class RecordingEngine:  # stands in for the model: what matters is the config the factory asks for
        def __init__(self, config):
            built.append(config)

    monkeypatch.setattr(neural, "Engine", RecordingEngine)
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("Staff get 25 days of annual leave.", encoding="utf-8")
    paths = dict(kb_dir=tmp_path / "kb", rules_dir=DEFAULT_RULES_DIR, index_dir=tmp_path / "idx")
    default_answerer(**paths)
    default_answerer(**paths, speculative_tokens=2)
    default_answerer(**paths, speculative_tokens=0)
    assert [c.speculative and c.speculative.num_speculative_tokens for c in built] == [DEFAULT_SPECULATIVE_TOKENS, 2, None]
    assert built[0].speculative.method == "ngram"
    with pytest.raises(ValueError, match="0..16"):
        default_answerer(**paths, speculative_tokens=True)
