"""`verirag rules facts`: what the patterns read from a KB (pattern, document line, text), per pattern, and the
sentences that use a relation's words but gave no fact (issue 48)."""
from __future__ import annotations

import json
from pathlib import Path

from api.cli import main

ROOT = Path(__file__).resolve().parent.parent
RULES, KB = str(ROOT / "rules"), str(ROOT / "kb")


def test_facts_name_their_pattern_and_the_line_that_states_them(capsys):
    assert main(["rules", "facts", RULES, "--kb", KB, "--relation", "hotel_limit_per_night", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    current = [f for f in out["facts"] if f["doc_id"] == "finance/travel_expense_2025.md"
               and f["fact"] == "hotel_limit_per_night(tier_1, 180 EUR)"]
    assert len(current) == 1 and current[0]["pattern"] == "EN_HOTEL_ROW" and not current[0]["superseded"]
    line = (ROOT / "kb" / "finance/travel_expense_2025.md").read_text(encoding="utf-8").splitlines()[current[0]["line"] - 1]
    assert "Tier 1" in line and "180" in line
    assert {f["relation"] for f in out["facts"]} == {"hotel_limit_per_night"}
    assert out["per_pattern"]["EN_HOTEL_ROW"] >= 6            # three tiers in each policy version
    [old] = [s for s in out["superseded"] if s["doc_id"] == "finance/travel_expense_2023.md"]
    assert old["superseded_by"] == "finance/travel_expense_2025.md"
    assert old["why"] == "front matter of finance/travel_expense_2025.md"


def test_the_text_report_lists_facts_counts_and_what_was_not_read(capsys):
    assert main(["rules", "facts", RULES, "--kb", KB]) == 0
    out = capsys.readouterr().out
    assert "finance/travel_expense_2025.md:" in out and "[EN_HOTEL_ROW]" in out
    assert "facts per pattern: " in out and "use a relation's words but gave no fact:" in out
    assert ("superseded: finance/travel_expense_2023.md (by finance/travel_expense_2025.md; front matter of "
            "finance/travel_expense_2025.md)") in out


def leave_rules_and_kb(tmp_path: Path) -> Path:
    """r.rules with one pattern reading an office's annual leave, and an empty kb/ folder beside it (returned)."""
    (tmp_path / "r.rules").write_text(
        'type office "office"\nentity office dublin "Dublin"\n'
        'relation annual_leave(o: office, d: duration) "annual leave"\n'
        'pattern PL: "{o:office} staff get {d:duration} of annual leave" -> annual_leave(o, d)\n', encoding="utf-8")
    kb = tmp_path / "kb"
    kb.mkdir()
    return kb


def test_unread_sentences_are_those_using_a_relations_words_with_a_value(tmp_path, capsys):
    kb = leave_rules_and_kb(tmp_path)
    (kb / "leave.md").write_text("# Leave\n\nDublin staff get 23 days of annual leave.\n\n"
                                 "Annual leave for Lisbon is 25 working days.\n\nAnnual leave is good.\n",
                                 encoding="utf-8")
    assert main(["rules", "facts", str(tmp_path / "r.rules"), "--kb", str(kb), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(f["fact"], f["pattern"], f["line"]) for f in out["facts"]] == [("annual_leave(dublin, 23 days)", "PL", 3)]
    assert [(u["line"], u["relations"]) for u in out["unread"]] == [(5, ["annual_leave"])]   # not the valueless one


def test_a_fact_from_a_note_says_it_never_verifies_on_its_own(tmp_path, capsys):
    # blind/03's author (obstacle 12): a note's facts were listed like any other
    kb = leave_rules_and_kb(tmp_path)
    (kb / "policy.md").write_text("# Leave\n\nDublin staff get 23 days of annual leave.\n", encoding="utf-8")
    (kb / "note.md").write_text("---\nauthority: note\n---\n# Huddle\n\nDublin staff get 30 days of annual leave.\n",
                                encoding="utf-8")
    assert main(["rules", "facts", str(tmp_path / "r.rules"), "--kb", str(kb), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted((f["fact"], f["standing"]) for f in out["facts"]) == [("annual_leave(dublin, 23 days)", 2),
                                                                        ("annual_leave(dublin, 30 days)", 0)]
    assert main(["rules", "facts", str(tmp_path / "r.rules"), "--kb", str(kb)]) == 0
    lines = capsys.readouterr().out.splitlines()
    [note] = [ln for ln in lines if "30 days)" in ln]
    assert "never verifies a claim on its own" in note
    assert not any("never verifies" in ln for ln in lines if "23 days)" in ln)


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main(["rules", "facts", RULES, "--kb", str(tmp_path / "nowhere")]) == 2
    assert "--kb" in capsys.readouterr().err
    assert main(["rules", "facts", RULES, "--kb", KB, "--relation", "no_such_relation"]) == 2
    assert "unknown relation(s) no_such_relation" in capsys.readouterr().err
    (tmp_path / "bad.rules").write_text("relation r(\n", encoding="utf-8")
    assert main(["rules", "facts", str(tmp_path / "bad.rules"), "--kb", KB]) == 2
    assert "bad.rules:" in capsys.readouterr().err
