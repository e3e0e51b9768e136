"""`--model openai+http://HOST:PORT/v1 --served-model NAME` on the commands that take --model: generation on
verirag's own server, and clear errors (exit 2 for a malformed URL, 1 for a server that is down)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from remote_support import MODEL, ScriptedEngine, closed_port, verirag_server

from api.cli import main

DATASET = Path(__file__).resolve().parent.parent / "eval" / "default_domain.jsonl"


def test_generate_on_the_remote_server_streaming_and_not(capsys) -> None:
    with verirag_server(ScriptedEngine(["Hello there.", "Hello there."])) as url:
        assert main(["generate", "hi", "--model", f"openai+{url}", "--served-model", MODEL, "--stats"]) == 0
        out, err = capsys.readouterr()
        assert out == "Hello there.\n" and re.search(r"12 generated tokens, finish=stop, ttft=\d+\.\d{3}s", err)  # streamed
        assert main(["generate", "hi", "--model", f"openai+{url}", "--stream", "--max-tokens", "5"]) == 0
        assert capsys.readouterr().out == "Hello\n"
        assert main(["generate", "hi", "--model", f"openai+{url}", "--raw"]) == 1
        assert "--raw" in capsys.readouterr().err


@pytest.mark.parametrize("command, status", [(["ask", "How long?"], 2), (["generate", "hi"], 1)])  # generate: 1 for any error
def test_a_malformed_url_is_a_clear_error(command, status, capsys) -> None:
    assert main([*command, "--model", "openai+ftp://gpu:8000/v1"]) == status
    err = capsys.readouterr().err
    assert "scheme must be http or https, not 'ftp'" in err and "Traceback" not in err


def test_remote_flags_need_a_remote_model(capsys) -> None:
    assert main(["ask", "How long?", "--served-model", "llama"]) == 2
    assert "--served-model need(s) --model openai+http://HOST:PORT/v1" in capsys.readouterr().err


def test_a_server_that_is_down_is_named_and_nothing_loads(capsys) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    assert main(["ask", "How long?", "--model", f"openai+{url}", "--remote-retries", "0"]) == 1
    err = capsys.readouterr().err
    assert f"remote generator {url}/models is unavailable: cannot connect" in err and "Traceback" not in err


def test_serve_settings_take_the_remote_flags(capsys) -> None:
    assert main(["serve", "--model", "openai+http://gpu:8000/v1", "--served-model", "llama", "--remote-timeout", "9",
                 "--print-settings"]) == 0
    err = capsys.readouterr().err
    assert "served_model = llama" in err and "remote_timeout_s = 9.0" in err
    assert main(["serve", "--model", "openai+http://gpu:port/v1", "--print-settings"]) == 2
    assert "malformed URL" in capsys.readouterr().err


def test_eval_with_a_malformed_url_is_a_usage_error(tmp_path, capsys) -> None:
    assert main(["eval", str(DATASET), "--model", "openai+gpu:8000/v1", "--out", str(tmp_path / "out"),
                 "--no-progress"]) == 2
    assert "scheme must be http or https" in capsys.readouterr().err
