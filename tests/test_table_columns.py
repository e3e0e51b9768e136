"""A value is read with its table column: a cell of one column does not answer a question naming another."""
from __future__ import annotations

import pytest

from pipeline.checks.answer_check import answer_gap, column_gap
from pipeline.readers.patterns import extract_claims
from pipeline.evidence.passage_facts import extract_evidence
from pipeline.question.focus import parse_question
from pipeline.text.tables import column_at
from symbolic import load_rulebase
from pipeline_fakes import FakePassage

WARRANTY = ("## 1. Warranty periods\n\n| Product | Robot warranty | Battery warranty |\n|---|---|---|\n"
            "| AX-200 | 24 months | 12 months |\n| LX-500 | 36 months | 18 months |\n\nParts have 6 months.")


def test_a_cell_is_read_under_its_header():
    col = column_at(WARRANTY, WARRANTY.index("36 months"))
    assert col is not None and col.header == "Robot warranty"
    assert col.headers == ("Product", "Robot warranty", "Battery warranty")
    assert column_at(WARRANTY, WARRANTY.index("18 months")).header == "Battery warranty"


def test_no_column_outside_a_table_body():
    assert column_at(WARRANTY, WARRANTY.rindex("6 months")) is None         # a sentence after the table
    assert column_at(WARRANTY, WARRANTY.index("Robot warranty")) is None     # the header row itself
    assert column_at(WARRANTY, WARRANTY.index("| LX-500") + 3) is None       # the row label
    assert column_at("| a | b |", 2) is None                                 # a lone row, no header


def test_rows_cut_from_their_header_use_the_carried_header():
    rows = "| LX-500 | 36 months | 18 months |"
    prefix = "| Product | Robot warranty | Battery warranty |\n|---|---|---|"
    assert column_at(rows, rows.index("18"), prefix).header == "Battery warranty"


def test_an_html_table_rendered_without_separator_and_a_ragged_row():
    text = "Tier | Limit\n1 | EUR 180\n2 | EUR 140 | extra"
    assert column_at(text, text.index("EUR 140")).header == "Limit"
    assert column_at(text, text.index("extra")) is None                      # past the header's cells


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules")
    (d / "t.rules").write_text('type product "product"\nentity product lx_500 "LX-500"\nentity product ax_200 "AX-200"\n',
                               encoding="utf-8")
    return load_rulebase(d)


@pytest.mark.parametrize("question, answer, expected", [
    # eval ans-02 with the 135M model: the robot-warranty cell for a question on the battery
    ("How long does the LX-500 run on one battery charge?", "The LX-500 runs on one battery charge for 36 months [1].",
     'the sources\' "Robot warranty", but the question asks about "Battery warranty"'),
    ("What is the battery warranty of the LX-500?", "The LX-500's battery warranty is 18 months [1].", None),
    ("How long is the robot warranty of the LX-500?", "The robot warranty of the LX-500 is 36 months [1].", None),
    # no column out-names the cell's own: nothing to tell them apart by
    ("What warranty does the LX-500 have?", "The LX-500 has a warranty of 36 months [1].", None),
])
def test_a_cell_of_another_column_does_not_answer(rb, question, answer, expected):
    passage = FakePassage("support/warranty.md", WARRANTY, 0.9)
    _facts, values = extract_evidence([passage], rb)
    claims, mentions = extract_claims(answer, [passage], rb)
    gap = answer_gap(answer, parse_question(question, rb), claims, mentions, rb, None, values)
    assert (gap is None) if expected is None else (expected in gap)


def test_a_value_also_stated_outside_the_table_is_left_alone(rb):
    text = WARRANTY + "\nThe LX-500 robot is covered for 36 months."
    passage = FakePassage("support/warranty.md", text, 0.9)
    _facts, values = extract_evidence([passage], rb)
    answer = "The LX-500 runs on one battery charge for 36 months [1]."
    claims, mentions = extract_claims(answer, [passage], rb)
    question = "How long does the LX-500 run on one battery charge?"
    assert column_gap(parse_question(question, rb), mentions, values) is None
    # (the answer still fails: no source sentence stating 36 months is about a battery charge)
    assert "about something else" in answer_gap(answer, parse_question(question, rb), claims, mentions, rb, None, values)


def test_a_terse_answer_answers_through_its_cells_column(rb):
    leave = FakePassage("hr/leave.md", "| Length of service | Annual leave |\n|---|---|\n| less than 2 years | 26 days |\n"
                        "| 2 years to less than 5 years | 28 days |", 0.9)
    _facts, values = extract_evidence([leave], rb)
    question = "How many days of annual leave does a full-time employee with 3 years of service get?"
    answer = "[1] 28 days"
    claims, mentions = extract_claims(answer, [leave], rb)
    # the row alone shares no topic word ("years" asks); its column names the annual leave (eval ans-09, 0.5B)
    assert answer_gap(answer, parse_question(question, rb), claims, mentions, rb, None, values) is None


def test_a_cut_opening_on_the_separator_keeps_the_header():
    from pipeline.generate.sources import cut
    from pipeline.generate.prompts import segments
    table = WARRANTY[WARRANTY.index("| Product"):WARRANTY.index("\n\nParts")]
    passage = FakePassage("support/warranty.md", table, 0.9, start=100)
    segs = segments(table)
    piece = cut(passage, segs, 1, 3)              # separator, AX-200 row, LX-500 row: the header left behind
    assert piece.text == "| AX-200 | 24 months | 12 months |\n| LX-500 | 36 months | 18 months |"
    assert piece.context_prefix.startswith("| Product | Robot warranty | Battery warranty |")
    assert table[piece.start - 100:piece.end - 100] == piece.text                 # still an exact span
    assert column_at(piece.text, piece.text.index("36 months"), piece.context_prefix).header == "Robot warranty"
