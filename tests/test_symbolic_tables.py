"""Table cells whose unit is only in the column header (issue 48): "Limit (USD) | 1,000" reads as USD 1,000, spans
stay those of the text as written, a cell's own unit wins (and is reported), prose is untouched."""
from __future__ import annotations

import pytest

from symbolic import load_rulebase, parse_value as v
from symbolic.tables import header_unit, typed_view

RULES = r'''
type grade "grade"
entity grade l5 "L5"
entity grade l6 "L6"
type office "office"
entity office dublin "Dublin"
entity office hangzhou "Hangzhou" aka "杭州"
relation approval_limit(g: grade, x: money[USD]) "approval limit"
relation annual_leave(o: office, d: duration) "annual leave"
relation standby(o: office, x: money[CNY]) "standby allowance"
pattern PA: "\| {g:grade} \| {x:money} \|" -> approval_limit(g, x)
pattern PL: "\| {o:office} \| {d:duration} \|" -> annual_leave(o, d)
pattern PS: "\| {o:office} \| {x:money} \|" -> standby(o, x)
pattern PP: "{g:grade} may approve up to {x:money}" -> approval_limit(g, x)
'''
DOC = """# Spending

| Grade | Limit per purchase (USD) |
|---|---|
| L5 | 1,000 |
| L6 | 5000 EUR |

| Office | Annual leave (working days) |
|---|---|
| Dublin | 23 |

| 办公室 | 值班补贴（元/天） |
|---|---|
| 杭州 | 300 |

L5 may approve up to 2,000 without a second signature.
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules")
    (d / "r.rules").write_text(RULES, encoding="utf-8")
    return load_rulebase(d)


@pytest.mark.parametrize("header, unit", [
    ("Limit per purchase (USD)", "USD"), ("Annual leave (working days)", "working days"), ("值班补贴（元/天）", "元"),
    ("Corporate card limit (EUR per month)", "EUR"), ("Discount (%)", "%"), ("EUR per day", "EUR"),
    ("Grade", None), ("Seats", None), ("Notes (see below)", None), ("", None),
])
def test_the_unit_a_header_gives_its_cells(header, unit):
    assert header_unit(header) == unit


def test_bare_cells_read_with_their_headers_unit_at_their_own_spans(rb):
    found = {str(f): DOC[s:e] for f, s, e in rb.extract(DOC)}
    assert found == {"approval_limit(l5, 1000 USD)": "| L5 | 1,000 |",
                     "approval_limit(l6, 5000 EUR)": "| L6 | 5000 EUR |",      # the cell's own unit wins
                     "annual_leave(dublin, 23 workdays)": "| Dublin | 23 |",
                     "standby(hangzhou, 300 CNY)": "| 杭州 | 300 |"}
    # prose keeps its own reading: a bare number there is no amount (PP reads nothing from "2,000 without")
    assert not any(f.relation == "approval_limit" and f.args[1] == v("USD 2000") for f, _s, _e in rb.extract(DOC))


def test_a_cell_contradicting_its_header_is_reported_where_it_is():
    view = typed_view(DOC)
    assert [(DOC[:off].count("\n") + 1, unit, cell) for off, unit, cell in view.conflicts] == [(6, "USD", "5000 EUR")]


def test_a_chunk_of_rows_reads_with_the_header_it_carries(rb):
    rows = "| L6 | 4,500 |\n| L5 | 900 |"
    header = "| Grade | Limit per purchase (USD) |\n|---|---|"
    assert sorted(str(f) for f, _s, _e in rb.extract(rows, table_header=header)) == \
        ["approval_limit(l5, 900 USD)", "approval_limit(l6, 4500 USD)"]
    assert rb.extract(rows) == []                         # no header: no unit, no amount


def test_ragged_and_empty_cells_read_nothing_wrongly(rb):
    ragged = "| Grade | Limit (USD) | Note |\n|---|---|---|\n| L5 |\n| L6 | | 7 |\n| L5 | 1,200 | x | extra |\n"
    assert [str(f) for f, _s, _e in rb.extract(ragged)] == ["approval_limit(l5, 1200 USD)"]
    view = typed_view(ragged)
    assert view.text.count("USD") == 2 and view.original(len(view.text)) == len(ragged)     # the header's and 1,200's


ROW_RULES = r'''
type tug "tug"
entity tug brenna "CT Brenna"
relation draught(t: tug, d: quantity[m]) "draught"
relation hire_fee(t: tug, x: money[CNY]) "hire fee"
relation pull_t(t: tug, n: number) "bollard pull in tonnes"
pattern PD: "\| Max draught \(m\) \| {d:quantity} \|" -> draught(?document, d)
pattern PF: "\| 租用费（元/小时） \| {x:money} \|" -> hire_fee(?document, x)
pattern PN: "\| Bollard pull \(t\) \| {n:number} \|" -> pull_t(?document, n)
'''
SHEET = "| Property | Value |\n|---|---|\n| Max draught (m) | 4.5 |\n| 租用费（元/小时） | 1,150 |\n" \
        "| Bollard pull (t) | 70 |\n| Crew | 4 |\n"


def test_a_row_labels_unit_types_its_cells(tmp_path):
    # issue 48 (blind/04's and blind/07's authors): "| 行政费（元/件） | 3,000 |" read nothing as money
    view = typed_view("| Property | Value |\n|---|---|\n| Max draught (m) | 4.5 |\n| Crew | 4 |\n| Berths (2025) | 3 |")
    assert view.text.splitlines()[2:] == ["| Max draught (m) | 4.5 m |", "| Crew | 4 |", "| Berths (2025) | 3 |"]
    assert typed_view("| Fee (GBP) | 5 | 6 |", row_labels=False).text == "| Fee (GBP) | 5 | 6 |"
    (tmp_path / "r.rules").write_text(ROW_RULES, encoding="utf-8")
    rb = load_rulebase(tmp_path)
    # the bare-number pattern (PN) keeps reading 70 as it did; the money and quantity ones read the row's unit
    got = {(f.relation, f.args[1]) for f, _s, _e in rb.extract(SHEET, subject="CT Brenna")}
    assert got == {("draught", v("4.5 m")), ("hire_fee", v("1150 元")), ("pull_t", v("70"))}


def test_a_bracketed_header_unit_is_a_unit_as_a_whole():
    # blind/07's author: "(lux hours)" read as hours, an unknown word before a time unit taken as a qualifier
    assert header_unit("Annual exposure (lux hours)") is None
    assert header_unit("Annual leave (working days)") == "working days"
    assert header_unit("Paid days") == "Paid days"          # a header's own words may qualify its unit
    assert typed_view("| Gallery | Annual exposure (lux hours) |\n|---|---|\n| East | 150,000 |").text.endswith(
        "| East | 150,000 |")
