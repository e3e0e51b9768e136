"""`verirag rules question`: how a question parses and what the rules prove for it, with no model (issue 48 item 8;
blind/09's author: 'no offline check of question parsing, only ask --explain with the model')."""
from __future__ import annotations

import json
from pathlib import Path

from api.cli import main

ROOT = Path(__file__).resolve().parent.parent
RULES, KB = str(ROOT / "rules"), str(ROOT / "kb")


def test_the_parse_goals_and_proof_of_a_question(tmp_path, capsys):
    index = str(tmp_path / "idx")
    assert main(["rules", "question", RULES, "--kb", KB, "--index", index, "--json",
                 "What is the hotel limit per night in a Tier 1 city?"]) == 0
    x = json.loads(capsys.readouterr().out)
    assert x["parse"]["relations"][0]["relation"] == "hotel_limit_per_night"
    assert x["proof"]["value"] == "180 EUR" and x["proof"]["answers_before_any_draft"] is True
    assert main(["rules", "question", RULES, "--kb", KB, "--index", index, "What is the hotel limit per night in Tier 1?"]) == 0
    out = capsys.readouterr().out
    assert "relations asked (score): hotel_limit_per_night(tier_1, ?)" in out
    assert "proof: hotel_limit_per_night(tier_1, ?) = 180 EUR (CF" in out and "answers before any draft" in out


def test_a_question_no_rule_answers_says_so(tmp_path, capsys):
    assert main(["rules", "question", RULES, "--kb", KB, "--index", str(tmp_path / "idx"),
                 "What colour is the office carpet?"]) == 0
    out = capsys.readouterr().out
    assert "none: the question parsed into no relation" in out and "proof: none" in out


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main(["rules", "question", str(tmp_path / "missing"), "--kb", KB, "q?"]) == 2
    assert "rules folder not found" in capsys.readouterr().err
    assert main(["rules", "question", RULES, "--kb", KB, "--index", str(tmp_path / "idx"), "  "]) == 2
    assert "error:" in capsys.readouterr().err
