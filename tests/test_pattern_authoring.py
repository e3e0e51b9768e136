"""Pattern texts as rule authors write them (issue 48; blind/06's author's obstacles 1-3): one match giving two
facts, a text placeholder that stays in its table cell, and a bracket group that chooses nothing is warned."""
from __future__ import annotations

from symbolic import Provenance, load_rulebase

RULES = r'''type grade "grade"
entity grade m2 "M2"
entity grade s1 "S1"
type person "person"
entity person helena "Helena Marsh"
relation commitment_limit(g: grade, x: money[GBP]) "commitment limit"
relation emergency_limit(g: grade, x: money[GBP]) "emergency works limit"
relation line_manager(p: person, m: text) "line manager"
pattern P_ROW: "\| {g:grade} \| {x:money} \| {y:money} \|" -> commitment_limit(g, x), emergency_limit(g, y)
pattern P_MGR: "\| {p:person} \| {m:text} \|" -> line_manager(p, m)
'''
TABLE = ("| Grade | Commitment limit (GBP) | Emergency works limit (GBP) |\n|---|---|---|\n"
         "| M2 | 10,000 | 25,000 |\n| S1 | 2,500 | 10,000 |\n")


def _facts(rb, text):
    return sorted((f.relation, f.args, f.provenance.rule_id) for f, _s, _e in
                  rb.extract(text, source=Provenance("document", doc_id="t.md")))


def test_one_match_gives_a_fact_per_conclusion(tmp_path):
    (tmp_path / "r.rules").write_text(RULES, encoding="utf-8")
    rb = load_rulebase(tmp_path)
    assert rb.warnings == []
    got = [(r, (a[0], format(a[1].amount, ".0f")), pid) for r, a, pid in _facts(rb, TABLE)]
    assert got == [("commitment_limit", ("m2", "10000"), "P_ROW"), ("commitment_limit", ("s1", "2500"), "P_ROW"),
                   ("emergency_limit", ("m2", "25000"), "P_ROW.2"), ("emergency_limit", ("s1", "10000"), "P_ROW.2")]


def test_a_text_placeholder_stays_in_its_cell(tmp_path):
    (tmp_path / "r.rules").write_text(RULES, encoding="utf-8")
    rb = load_rulebase(tmp_path)
    # Helena's manager cell is empty: the text must not run on into the next row (it read "Board | |\n| Owen")
    rows = "| Name | Line manager |\n|---|---|\n| Helena Marsh | |\n| Owen Pritchard | Helena Marsh |\n"
    assert [(r, a) for r, a, _p in _facts(rb, rows)] == []
    wrapped = "| Helena Marsh | the Board of\nDirectors |\n"
    assert [(r, a) for r, a, _p in _facts(rb, wrapped)] == [("line_manager", ("helena", "the Board of\nDirectors"))]


def test_a_bracket_group_with_no_choice_is_warned(tmp_path):
    (tmp_path / "r.rules").write_text(RULES + 'relation rest(g: grade, d: duration) "rest period"\n'
                                      'pattern P_REST: "\\| Rest period (8 hours) \\| {g:grade} \\| {d:duration}" '
                                      '-> rest(g, d)\n'
                                      'pattern P_OK: "(A|An) {g:grade} rests \\(at least\\) {d:duration}" -> rest(g, d)\n',
                                      encoding="utf-8")
    (w,) = load_rulebase(tmp_path).warnings
    assert w.line == 12 and w.column == 33   # the "("
    assert "'(8 hours)' chooses nothing" in w.message and "\\(" in w.message


def test_a_pattern_may_read_answers_only_or_documents_only(tmp_path):
    # blind/08's author (obstacle 12): a pattern written for answers ("the call-out payment is GBP 75") also read
    # the policy's worked example as evidence
    (tmp_path / "r.rules").write_text(RULES + '''
pattern SAY_LIMIT on answers: "commitment limit of {g:grade} is {x:money}" -> commitment_limit(g, x)
pattern DOC_LIMIT cf 0.9 on documents: "{g:grade} may commit up to {x:money}" -> commitment_limit(g, x)
''', encoding="utf-8")
    rb = load_rulebase(tmp_path)
    assert rb.warnings == []
    text = "The commitment limit of M2 is GBP 9,000. S1 may commit up to GBP 2,000."

    def read(source):
        return sorted((f.provenance.rule_id, a[0]) for f, _s, _e in rb.extract(text, source=source) for a in [f.args])
    assert read(Provenance("document", doc_id="t.md")) == [("DOC_LIMIT", "s1")]
    assert read(Provenance("answer")) == [("SAY_LIMIT", "m2")]
    [doc] = [cp.pattern for cp in rb.patterns if cp.pattern.id == "DOC_LIMIT"]
    assert (doc.reads, doc.cf) == ("documents", 0.9)


def test_a_pattern_reading_something_else_is_an_error(tmp_path):
    import pytest
    from symbolic import RuleErrors
    (tmp_path / "r.rules").write_text(RULES + 'pattern P on emails: "x {g:grade}" -> commitment_limit(g, 1 GBP)\n',
                                      encoding="utf-8")
    with pytest.raises(RuleErrors) as err:
        load_rulebase(tmp_path)
    assert "r.rules:11:14:" in str(err.value) and "expected \"answers\" or \"documents\"" in str(err.value)
