"""?document in a pattern's conclusion: a datasheet's rows without a subject column are about the entity the
document is about (front matter `subject:`, else the one entity of the argument's type its title names)."""
from __future__ import annotations

import json

import pytest

from api.cli import main
from symbolic import RuleErrors, load_rulebase

RULES = r'''
type product "product"
entity product pulse "Aldermoor Pulse" aka "Pulse"
entity product beacon "Beacon"
relation seat_price(p: product, x: money[EUR]) "seat price"
pattern PSEAT: "\| Additional seat \| {x:money} \|" -> seat_price(?document, x)
'''
SHEET = "| Item | Price (EUR) |\n|---|---|\n| Additional seat | 45 |\n"


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    d = tmp_path_factory.mktemp("rules")
    (d / "r.rules").write_text(RULES, encoding="utf-8")
    return d


def test_the_document_subject_binds_the_row(rules):
    rb = load_rulebase(rules)
    def read(subject):
        return [str(f) for f, _s, _e in rb.extract(SHEET, subject=subject)]
    assert read("Aldermoor Pulse — Price sheet 2025") == ["seat_price(pulse, 45 EUR)"]
    assert read("beacon") == ["seat_price(beacon, 45 EUR)"]               # front matter may give the id
    assert read("Price sheet") == [] and read(None) == []                 # nobody named: no fact
    assert read("Pulse and Beacon bundle") == []                          # two named: whose price is unsaid


def test_document_must_stand_for_an_entity(tmp_path):
    (tmp_path / "r.rules").write_text('relation fee(x: money[EUR], y: money[EUR])\n'
                                      'pattern PF: "fee {x:money}" -> fee(?document, x)\n', encoding="utf-8")
    with pytest.raises(RuleErrors, match=r"r.rules:2:\d+: pattern PF: \?document stands for the entity"):
        load_rulebase(tmp_path)


def test_front_matter_subject_then_the_title(rules, tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("---\nsubject: Beacon\n---\n# Price sheet\n\n" + SHEET, encoding="utf-8")
    (kb / "b.md").write_text("# Aldermoor Pulse price sheet\n\n" + SHEET, encoding="utf-8")
    assert main(["rules", "facts", str(rules), "--kb", str(kb), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted((f["doc_id"], f["fact"]) for f in out["facts"]) == [
        ("a.md", "seat_price(beacon, 45 EUR)"), ("b.md", "seat_price(pulse, 45 EUR)")]
