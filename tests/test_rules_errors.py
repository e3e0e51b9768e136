"""Broken rule files: every error is reported at its exact line and column with the line and a caret."""
from pathlib import Path

import pytest

from symbolic import RuleError, RuleErrors, load_rulebase
from symbolic.parser import parse_text

BROKEN = Path(__file__).parent / "fixtures" / "rules" / "broken"

# file -> (line, column, a phrase the message must contain); columns are 1-based, hand-counted
EXPECTED = {
    "bad_character.rules": (3, 40, "unexpected character '@'"),
    "bad_placeholder.rules": (3, 26, "unknown type 'numbr'"),
    "cf_out_of_range.rules": (2, 11, "certainty factor 1.5 is outside [-1, 1]"),
    "compare_mismatch.rules": (2, 38, "cannot compare duration with money"),
    "currency_mismatch.rules": (2, 13, "expected CNY, got 500 USD"),
    "duplicate_id.rules": (3, 6, "duplicate rule id 'F1'"),
    "link_type_mismatch.rules": (5, 19, "link city_tier -> price: price takes no tier (the value of city_tier)"),
    "missing_comma.rules": (2, 24, "unexpected 'person'"),
    "missing_include.rules": (1, 9, "cannot read rule file"),
    "missing_message.rules": (2, 6, "rule F3 needs a message"),
    "missing_then.rules": (2, 32, 'expected "and" or "then"'),
    "type_mismatch.rules": (2, 15, "expected duration[day], got money"),
    "unbound_goal_head.rules": (3, 16, "unbound variable ?y in the conclusion of goal G1"),
    "unbound_variable.rules": (3, 41, "unbound variable ?y in the conclusion of rule F1"),
    "unknown_entity.rules": (3, 10, "'tim' is not a person (did you mean 'tom'?)"),
    "unknown_limit.rules": (2, 69, "unknown limit 'upwards': write limit upper"),
    "unknown_link_relation.rules": (3, 19, "unknown relation 'hotel_limt' in link (did you mean 'hotel_limit'?)"),
    "unknown_relation.rules": (3, 6, "unknown relation 'parnet' (did you mean 'parent'?)"),
    "unknown_type.rules": (1, 12, "unknown type 'colour'"),
    "unknown_unit.rules": (2, 17, "unknown unit 'fortnights'"),
    "unterminated_string.rules": (3, 18, "unterminated string"),
    "variable_in_fact.rules": (2, 8, "a fact cannot contain the variable ?x"),
    "wrong_arity.rules": (2, 6, "p takes 2 argument(s)"),
}


def test_corpus_is_complete():
    assert sorted(p.name for p in BROKEN.glob("*.rules")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_error_location_and_message(name):
    line, col, phrase = EXPECTED[name]
    with pytest.raises(RuleErrors) as info:
        load_rulebase(BROKEN / name)
    errs = info.value.errors
    assert len(errs) == 1, [str(e) for e in errs]
    err = errs[0]
    assert (err.line, err.column) == (line, col), str(err)
    assert phrase in err.message
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{BROKEN / name}:{line}:{col}: ") if name != "missing_include.rules" \
        else rendered[0].startswith(f"{BROKEN / name}:1:9: ")
    source = (BROKEN / name).read_text().splitlines()[line - 1]
    assert rendered[1] == "  " + source
    assert rendered[2] == "  " + " " * (col - 1) + "^"


def test_all_errors_of_a_file_are_reported_in_order(tmp_path):
    text = 'relation p(text)\nfact q(a)\nfact p(a, b)\nrule F1 "m": if p(?x) then assert p(?y)\n'
    errs = parse_text(text, "t.rules")[1]
    assert errs == []  # syntactically fine; the errors are semantic
    path = tmp_path / "multi.rules"
    path.write_text(text)
    with pytest.raises(RuleErrors) as info:
        load_rulebase(path)
    assert [(e.line, e.column) for e in info.value.errors] == [(2, 6), (3, 6), (4, 37)]


def test_rule_error_is_one_exception_type():
    assert issubclass(RuleErrors, RuleError)
    with pytest.raises(RuleError, match="no such rule file or directory"):
        load_rulebase("/nonexistent/dir/x.rules")


def test_chinese_text_in_errors_keeps_caret_aligned_by_character():
    errs = parse_text('entity 人 "张三"\nfact 父亲(张三 @)\n', "zh.rules")[1]
    assert (errs[0].line, errs[0].column) == (2, 12)
    assert str(errs[0]).splitlines()[2] == "  " + " " * 11 + "^"


def test_lint_warnings_unreachable_goal_and_cycle(tmp_path):
    (tmp_path / "w.rules").write_text(
        'type t\nrelation a(t)\nrelation b(t)\nrelation c(t)\nfact a(x)\n'
        'goal G1 "c needs b": c(?x) if b(?x)\n'
        'rule F1 "a to b": if a(?x) and not c(?x) then assert b(?x)\n'
        'rule F2 "b to a": if b(?x) then assert a(?x)\n')
    rb = load_rulebase(tmp_path)       # warnings do not stop loading
    assert [(w.line, w.column, w.severity) for w in rb.warnings] == [(7, 6, "warning")]
    assert "rules F1 -> F2 form a cycle" in rb.warnings[0].message
    (tmp_path / "w.rules").write_text('type t\nrelation b(t)\nrelation c(t)\ngoal G1 "c needs b": c(?x) if b(?x)\n')
    rb = load_rulebase(tmp_path)
    assert [(w.line, w.column) for w in rb.warnings] == [(4, 6)]
    assert "goal G1 is unreachable: nothing produces b" in rb.warnings[0].message
