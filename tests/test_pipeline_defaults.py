"""Every entry point (AskOptions, the ask/eval CLIs, the REST /ask schema) uses the one DEFAULT_MAX_TOKENS."""
from __future__ import annotations

import pytest

from api.cli import build_parser
from api.schemas import AskRequest
from pipeline import AskOptions
from pipeline.defaults import DEFAULT_MAX_TOKENS


@pytest.mark.parametrize("argv", [["ask", "a question?"], ["eval", "data.jsonl"]])
def test_cli_defaults(argv):
    assert build_parser().parse_args(argv).max_tokens == DEFAULT_MAX_TOKENS


def test_ask_cli_speculates_by_default():
    from pipeline.defaults import DEFAULT_SPECULATIVE_TOKENS
    assert build_parser().parse_args(["ask", "a question?"]).speculative_tokens == DEFAULT_SPECULATIVE_TOKENS > 0
    assert build_parser().parse_args(["ask", "q?", "--speculative-tokens", "0"]).speculative_tokens == 0


def test_options_and_rest_defaults():
    assert AskOptions().max_tokens == DEFAULT_MAX_TOKENS
    assert AskRequest(question="How long?").max_tokens == DEFAULT_MAX_TOKENS


def test_rest_limits_kept():
    with pytest.raises(ValueError):
        AskRequest(question="How long?", max_tokens=4097)
    with pytest.raises(ValueError):
        AskRequest(question="How long?", max_tokens=0)
    assert AskRequest(question="How long?", max_tokens=4096).max_tokens == 4096
