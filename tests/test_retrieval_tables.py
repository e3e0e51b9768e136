"""Retrieval: tables chunked by rows with their header (markdown and HTML), lists with their lead-in."""
from __future__ import annotations

import re

import pytest

from retrieval import Retriever, ingest
from retrieval.chunking import ChunkingConfig, chunk_text
from retrieval.documents import load_document
from retrieval.html_text import html_to_text

HEADER = "| City tier | Limit per night |\n|---|---|"
LEAD_IN = "The hotel cost per night, excluding breakfast, must not exceed:"


def table_doc(rows: int, lead_in: str = LEAD_IN) -> str:
    body = "".join(f"| Tier {i} | EUR {100 + i} |\n" for i in range(1, rows + 1))
    return (f"# Travel Policy\n\nIntro sentence for the policy.\n\n## 4. Hotels\n\n{lead_in}\n\n{HEADER}\n{body}\n"
            "A hotel above the limit needs written pre-approval from a director.\n")


def rows_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("| Tier")]


def check_spans(text: str, chunks) -> None:
    for c in chunks:
        assert text[c.start:c.end] == c.text
        assert c.text == text[c.start:c.end].strip()


def test_small_table_stays_whole_with_its_lead_in():
    text = table_doc(3)
    chunks = chunk_text("t.md", text)
    check_spans(text, chunks)
    [hotel] = [c for c in chunks if "EUR 101" in c.text]
    assert LEAD_IN in hotel.text and HEADER in hotel.text and rows_of(hotel.text) == rows_of(text)
    assert hotel.heading_path == ["Travel Policy", "4. Hotels"] and hotel.context_prefix is None


def test_large_table_every_chunk_carries_header_and_lead_in_and_rows_stay_whole():
    text = table_doc(60)
    cfg = ChunkingConfig(max_chars=300, overlap_chars=60, min_chars=100)
    chunks = chunk_text("t.md", text, 0, cfg)
    check_spans(text, chunks)
    table_chunks = [c for c in chunks if rows_of(c.text)]
    assert len(table_chunks) >= 5
    first, rest = table_chunks[0], table_chunks[1:]
    assert LEAD_IN in first.text and HEADER in first.text and first.context_prefix is None
    for c in rest:
        assert c.context_prefix == f"{LEAD_IN}\n{HEADER}", c.text
        assert c.text.startswith("| Tier") and c.heading_path == ["Travel Policy", "4. Hotels"]
        assert len(c.context_prefix) + 1 + len(c.text) <= cfg.max_chars  # the prefix is budgeted
    # every row lies whole in exactly one chunk: no row is split, glued or repeated
    seen = [r for c in table_chunks for r in rows_of(c.text)]
    assert seen == rows_of(text)
    for c in table_chunks:
        assert all(re.fullmatch(r"\| Tier \d+ \| EUR \d+ \|", r) for r in rows_of(c.text))
    # the row that answers "limit for Tier 42" is in one chunk together with its header
    [answer] = [c for c in chunks if "| Tier 42 | EUR 142 |" in c.text]
    assert HEADER in (answer.context_prefix or "") + answer.text


def test_table_header_is_embedded_and_bm25_indexed(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "travel.md").write_text(table_doc(80), encoding="utf-8")
    ingest(kb, tmp_path / "index", embedder="hashing", chunking=ChunkingConfig(max_chars=300, overlap_chars=60,
                                                                              min_chars=100))
    r = Retriever.open(tmp_path / "index")
    text = r.document_text("travel.md")
    # "per night" appears only in the lead-in and header: rows far down the table are found by it
    hits = r.search("limit per night Tier 57", top_k=3, mode="bm25")
    top = hits[0]
    assert "| Tier 57 | EUR 157 |" in top.text and text[top.start:top.end] == top.text
    assert top.context_prefix == f"{LEAD_IN}\n{HEADER}" and "per night" not in top.text
    assert top.heading_path == ["Travel Policy", "4. Hotels"] and top.page_start is None


def test_bad_tables_ragged_header_only_no_separator():
    ragged = "| a | b | c |\n|---|---|---|\n| 1 |\n| 2 | 3 | 4 | 5 |\n| 6 | 7 |\n| 8 |\n| 9 | 10 | 11 | 12 | 13 |\n"
    text = (f"# T\n\n## Ragged\n\n{ragged}\n## Header only\n\n| x | y |\n|---|---|\n\n"
            "## No separator\n\n| Tier 1 | EUR 180 |\n| Tier 2 | EUR 140 |\n\nAfter.\n")
    chunks = chunk_text("t.md", text, 0, ChunkingConfig(max_chars=60, overlap_chars=0, min_chars=0))
    check_spans(text, chunks)
    assert [(c.heading_path[-1], c.text, c.context_prefix) for c in chunks] == [
        ("Ragged", "| a | b | c |\n|---|---|---|\n| 1 |\n| 2 | 3 | 4 | 5 |", None),
        ("Ragged", "| 6 | 7 |\n| 8 |", "| a | b | c |\n|---|---|---|"),
        ("Ragged", "| 9 | 10 | 11 | 12 | 13 |", "| a | b | c |\n|---|---|---|"),
        ("Header only", "## Header only\n\n| x | y |\n|---|---|", None),
        # without a separator line no row is taken for a header: nothing goes in front of rows
        ("No separator", "## No separator\n\n| Tier 1 | EUR 180 |\n| Tier 2 | EUR 140 |", None),
        ("No separator", "After.", None)]


def test_ten_thousand_row_table_is_linear_in_chunks():
    rows = 10_000
    text = "# Rates\n\nRates apply as follows:\n\n| id | value |\n|---|---|\n" + "".join(
        f"| {i} | EUR {i * 3} |\n" for i in range(rows))
    chunks = chunk_text("big.md", text)
    check_spans(text, chunks)
    row_lines = sum(c.text.count("\n| ") + c.text.startswith("| ") for c in chunks)
    assert row_lines == rows + 1  # each data row once, plus the header row in the first chunk
    # rows are ~20 chars: ~35 per 800-char chunk minus the header's room, never one row per chunk
    assert 250 <= len(chunks) <= 320
    assert all(c.context_prefix == "Rates apply as follows:\n| id | value |\n|---|---|" for c in chunks[1:])


def test_pipe_lines_inside_code_fences_are_not_tables():
    text = "# Shell\n\nRun this:\n\n```\n| grep x\n|---|---|\n| a |\n```\n"
    chunks = chunk_text("s.md", text)
    assert len(chunks) == 1 and chunks[0].context_prefix is None


def test_list_keeps_its_lead_in():
    items = "".join(f"- Item {i}: the rule that applies in case {i} of the procedure.\n" for i in range(20))
    text = f"# Rules\n\n## Steps\n\nBefore booking, check the following:\n\n{items}\nDone.\n"
    small = chunk_text("l.md", "# Rules\n\nCheck these:\n- one\n- two\n")
    assert small[0].text == "# Rules\n\nCheck these:\n- one\n- two" and small[0].context_prefix is None
    chunks = chunk_text("l.md", text, 0, ChunkingConfig(max_chars=250, overlap_chars=0, min_chars=50))
    check_spans(text, chunks)
    listed = [c for c in chunks if "- Item" in c.text]
    assert len(listed) >= 3 and "Before booking, check the following:" in listed[0].text
    for c in listed[1:]:
        assert c.context_prefix == "Before booking, check the following:" and c.text.startswith("- Item")
    assert all(re.fullmatch(r"- Item \d+: the rule that applies in case \d+ of the procedure\.", line)
               for c in listed for line in c.text.split("\n") if line.startswith("- Item"))


HTML = """<html lang="en"><head><title>Travel</title></head><body>
<h1>Travel Policy</h1><h2>Hotels</h2>
<p>The hotel cost per night must not exceed:</p>
<table><thead><tr><th>Tier</th><th>Limit</th></tr></thead>
<tbody><tr><td>1</td><td>EUR 180</td></tr><tr><td>2</td><td>EUR <b>140</b><br>incl. VAT</td></tr>
<tr><td>a|b</td><td><table><tr><td>in</td><td>ner</td></tr></table></td></tr></tbody></table>
<table><caption>Per diem</caption><tr><th>Day</th><th>Amount</th></tr><tr><td>Full</td><td>EUR 52</td></tr></table>
<table><tr><td>no</td><td>header</td></tr></table>
<ul><li>Economy class</li><li>Rail second class<ol><li>first sub</li><li>second sub</li></ol></li></ul>
<p>After.</p></body></html>"""


def test_html_tables_become_markdown_rows_and_lists_items():
    text, title, lang = html_to_text(HTML)
    assert (title, lang) == ("Travel", "en")
    assert "1EUR 180" not in text and "| 1 | EUR 180 |" in text
    assert "| Tier | Limit |\n|---|---|\n| 1 | EUR 180 |\n| 2 | EUR 140 incl. VAT |\n| a\\|b | in ner |" in text
    assert "Per diem:\n\n| Day | Amount |\n|---|---|\n| Full | EUR 52 |" in text  # caption = lead-in
    assert "| no | header |\n" in text and "| no | header |\n|---|" not in text  # no <th>: no header
    assert "- Economy class\n- Rail second class\n1. first sub\n2. second sub\n" in text


def test_html_table_chunks_carry_the_header(tmp_path):
    rows = "".join(f"<tr><td>{i}</td><td>EUR {100 + i}</td></tr>" for i in range(1, 80))
    (tmp_path / "t.html").write_text(f"<h1>Limits</h1><p>Limits per tier:</p><table><tr><th>Tier</th>"
                                     f"<th>Limit</th></tr>{rows}</table>", encoding="utf-8")
    doc = load_document(tmp_path, "t.html")
    chunks = chunk_text("t.html", doc.text, 0, ChunkingConfig(max_chars=200, overlap_chars=40, min_chars=50))
    check_spans(doc.text, chunks)
    assert len(chunks) >= 5 and "| Tier | Limit |" in chunks[0].text
    assert all(c.context_prefix == "Limits per tier:\n| Tier | Limit |\n|---|---|" for c in chunks[1:])
    assert sum(len(re.findall(r"^\| \d+ \| EUR \d+ \|$", c.text, re.M)) for c in chunks) == 79


@pytest.mark.parametrize("html,want", [
    ("<table><tr><td>1</td><td>EUR 180</td></tr></table>", "| 1 | EUR 180 |"),
    ("<table><tr><th>a</th><td>b</td></tr></table>", "| a | b |"),  # a row-header cell: no separator
    ("<table><tr><td>unclosed", "| unclosed |"),
    ("<ol><li>one</li><li>two</li></ol>", "1. one\n2. two"),
])
def test_html_small_cases(html, want):
    assert html_to_text(html)[0].strip() == want
