"""Every syntax error of a file, with recovery at the next statement; hints for common mistakes; facts
files with file:line errors (issue 19 item 5)."""
import json
from pathlib import Path

import pytest

from api.cli import main
from symbolic import RuleErrors, load_rulebase
from symbolic.parser import parse_text

FAMILY = Path(__file__).parent / "fixtures" / "rules" / "family"

BROKEN = '''# several mistakes in one file
type person "person"
relation p(person, money[EUR])
rulle R1 "typo in the keyword": if p(?x, ?m) then violation "x"
rule R2 "missing then": if p(?x, ?m) and ?m > 5 EUR
    violation "too much"
fact p(amy, $5,000)
rule R3 "fine": if p(?x, ?m) and ?m > 10 EUR then violation "{x}"
rule R4 "unfinished": if p(?x, ?m) and
rule R5 "fine too": if p(?x, ?m) then violation "{m}"
'''


def test_every_syntax_error_is_reported_once_in_order():
    pf, errs = parse_text(BROKEN, "b.rules")
    got = [(e.line, e.column, e.message.split(";")[0].split(" (")[0]) for e in errs]
    assert got == [(4, 1, "unexpected 'rulle'"),
                   (6, 5, "unexpected 'violation'"),
                   (7, 13, "'$5,000' outside quotes: a comma separates arguments"),
                   (9, 39, "the statement ends after this")]
    assert "(did you mean 'rule'?)" in errs[0].message
    assert 'expected "and" or "then"' in errs[1].message
    assert 'write $5000 or "$5,000"' in errs[2].message
    assert "(is 'then …' missing?)" not in errs[3].message and "expected" in errs[3].message
    # the statements around the broken ones were still read
    assert [r.id for r in pf.rules] == ["R3", "R5"]


def test_load_reports_them_all_with_carets(tmp_path):
    (tmp_path / "b.rules").write_text(BROKEN)
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    text = str(info.value)
    assert text.count(f"{tmp_path / 'b.rules'}:") == 4
    assert "  fact p(amy, $5,000)\n              ^" in text


@pytest.mark.parametrize("source, phrase", [
    ('relation p(strng)\n', "unknown type 'strng' in relation p (did you mean 'string'?)"),
    ('type t\nrelation p(t, duration)\nfact p(x, 5 dyas)\n', "unknown unit 'dyas' (did you mean 'days'?"),
    ('type t\nrelation q(t)\nrelation p(t)\nrule R "m": if q(?x) adn p(?x) then violation "v"\n',
     "unexpected 'adn'"),
    # blind/03's author wrote `unique` before the label (issue 48)
    ('type person\nrelation reports_to(a: person, b: person) unique "line manager" aka "manager"\n',
     "2:50: unexpected a quoted text after `unique`: `unique` comes after the label and its aka names"),
    ('type person\nrelation reports_to(a: person, b: person) unique aka "manager"\n',
     "unexpected 'aka' after `unique`"),
])
def test_did_you_mean(tmp_path, source, phrase):
    (tmp_path / "x.rules").write_text(source)
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    assert phrase in str(info.value)


def test_regex_habits_in_plain_patterns_are_warned(tmp_path):
    (tmp_path / "x.rules").write_text('type t\nentity t a "A"\nrelation p(t, number)\n'
                                      'pattern P: "{t} (is )?worth {n:number}" -> p(t, n)\n')
    (w,) = load_rulebase(tmp_path).warnings
    assert w.line == 4 and w.column == 22 and "'?' after ')' is a literal '?'" in w.message


def test_facts_json_errors_name_the_file_and_line(tmp_path, capsys):
    facts = tmp_path / "f.json"
    facts.write_text('[\n  {"relation": "parent", "args": ["ann", "sue"]},\n'
                     '  {"relation": "parnet", "args": ["bob", "ann"]},\n'
                     '  {"relation": "parent", "args": ["bob"]}\n]\n')
    assert main(["rules", "explain", "grandparent(bob, ?z)", "--rules", str(FAMILY), "--facts", str(facts)]) == 2
    err = capsys.readouterr().err
    assert f"{facts}:3:1: unknown relation 'parnet' (did you mean 'parent'?)" in err
    assert f"{facts}:4:1: parent takes 2 argument(s)" in err
    facts.write_text('[{"relation": "parent", "args": ["ann", "sue"]},]')
    assert main(["rules", "explain", "grandparent(bob, ?z)", "--rules", str(FAMILY), "--facts", str(facts)]) == 2
    assert f"{facts}:1:" in capsys.readouterr().err


def test_facts_yaml_and_closed_entity_types(tmp_path, capsys):
    from symbolic.fact_input import load_facts_file
    rb = load_rulebase(Path(__file__).parent / "fixtures" / "rules" / "claimgoals")
    f = tmp_path / "f.yaml"
    f.write_text("- {relation: grade_of, args: [amy, G3]}\n- {relation: grade_of, args: [bob, G4]}\n")
    with pytest.raises(RuleErrors) as info:
        load_facts_file(f, rb)
    (e,) = info.value.errors
    assert (e.line, e.message) == (2, "'G4' is not a grade (did you mean 'g5'?)")   # g3 and g5 tie: the last
    f.write_text("- {relation: grade_of, args: [amy, G3], cf: 0.8}\n- approval_limit(g3, \"EUR 100\")\n")
    got = load_facts_file(f, rb)
    assert [(str(x), x.cf) for x in got] == [("grade_of(amy, g3)", 0.8), ("approval_limit(g3, 100 EUR)", 1.0)]
    assert json.dumps([x.to_dict() for x in got])   # plain data


def test_a_goal_on_the_document_relations_is_reachable(tmp_path):
    # the cookbook's author was told "nothing produces document_status": every document has a status
    (tmp_path / "x.rules").write_text('type p\nentity p a "A"\nrelation allowance(p, money[EUR]) "allowance"\n'
                                      'relation in_force(p, money[EUR]) "allowance in force"\n'
                                      'pattern P: "{p} gets {x:money}" -> allowance(p, x)\n'
                                      'goal G "current only": in_force(?p, ?x) if allowance(?p, ?x) from ?d and '
                                      'document_status(?d, "current")\n')
    assert [w.message for w in load_rulebase(tmp_path).warnings if "unreachable" in w.message] == []


@pytest.mark.parametrize("pattern, column, phrase", [
    (r'"\| {r:room} [with a view)] \| {n:number} \|"', 37, "')' closes no '('"),
    (r'"(A|An {r:room} seats {n:number}"', 13, "'(' is never closed"),
    (r'"{r:room} seats {n:number}]"', 38, "']' closes no '['"),
])
def test_an_unbalanced_bracket_is_located(tmp_path, pattern, column, phrase):
    # blind/07's author: a ')' inside [ ] gave "bad regular expression: unbalanced parenthesis" at the text's start
    (tmp_path / "x.rules").write_text('type room "room"\nentity room hall "Great Hall"\n'
                                      'relation capacity(r: room, n: number) "capacity"\n'
                                      f'pattern Q: {pattern} -> capacity(r, n)\n')
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    (err,) = info.value.errors
    assert err.line == 4 and err.column == column and phrase in err.message and "write \\" in err.message


def test_a_unit_with_a_slash_unquoted_is_an_error(tmp_path):
    # blind/08's author: `?s > 0 km/h` passed rules check, read as (0 km) / h, and the goal never proved anything
    (tmp_path / "x.rules").write_text('type v "vehicle"\nentity v tug "tug"\n'
                                      'relation speed(v, quantity[km/h]) "speed"\nrelation moving(v, quantity[km/h]) "moving"\n'
                                      'goal G "moving": moving(?v, ?s) if speed(?v, ?s) and ?s > 0 km/h\n')
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    (err,) = info.value.errors
    assert err.line == 5 and "'h' in arithmetic is no value" in err.message and '"0 km/h"' in err.message
    (tmp_path / "x.rules").write_text('type v "vehicle"\nentity v tug "tug"\n'
                                      'relation speed(v, quantity[km/h]) "speed"\nrelation moving(v, quantity[km/h]) "moving"\n'
                                      'goal G "moving": moving(?v, ?s) if speed(?v, ?s) and ?s > "0 km/h"\n')
    assert load_rulebase(tmp_path).backward_rules
