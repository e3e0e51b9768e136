"""`verirag rules check` and `verirag rules explain` end to end through the CLI entry point."""
import json
from pathlib import Path

from api.cli import main

FIX = Path(__file__).parent / "fixtures" / "rules"


def test_check_ok_and_json(capsys):
    assert main(["rules", "check", str(FIX / "hr")]) == 0
    assert "ok: 1 file(s), 4 relations, 3 entities, 4 patterns, 0 facts, 2 rules, 2 goals" in capsys.readouterr().out
    assert main(["rules", "check", str(FIX / "family"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["goals"] == 7 and out["limits"] == {"upper": [], "lower": []}


def test_check_lists_the_limits_the_yes_no_checks_use(tmp_path, capsys):
    (tmp_path / "l.rules").write_text(
        'type policy "policy"\nentity policy p "policy"\n'
        'relation hotel_limit(policy, money[EUR]) "hotel limit per night"\n'
        'relation min_hours(policy, duration[hour]) "business class minimum flight time"\n'
        'relation return_period(policy, duration[day]) "return period" limit upper\n'
        'relation speed_limit_signs(policy, number) "speed limit signs" limit none\n', encoding="utf-8")
    assert main(["rules", "check", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "upper limits: hotel_limit, return_period\n" in out and "lower limits: min_hours\n" in out
    assert main(["rules", "check", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["limits"] == {"upper": ["hotel_limit", "return_period"],
                                                             "lower": ["min_hours"]}


def test_check_reports_errors_with_location(capsys):
    assert main(["rules", "check", str(FIX / "broken" / "unknown_relation.rules")]) == 1
    err = capsys.readouterr().err
    assert "unknown_relation.rules:3:6: unknown relation 'parnet' (did you mean 'parent'?)" in err
    assert main(["rules", "check", "/no/such/dir"]) == 1
    assert "no such rule file or directory" in capsys.readouterr().err


def test_check_strict_fails_on_warnings(capsys):
    assert main(["rules", "check", str(FIX / "loop.rules")]) == 0
    assert main(["rules", "check", str(FIX / "loop.rules"), "--strict"]) == 1


def test_explain_how_and_why(tmp_path, capsys):
    facts = tmp_path / "f.json"
    facts.write_text(json.dumps([{"relation": "parent", "args": ["ann", "sue"], "cf": 0.9}]))
    rc = main(["rules", "explain", "grandparent(bob, ?z)", "--rules", str(FIX / "family"), "--facts", str(facts), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and {c["conclusion"]: c["cf"] for c in out["conclusions"]} == {
        "grandparent(bob, jim)": 0.54, "grandparent(bob, sue)": 0.72}     # 0.6*0.9 and min(0.8,0.9)*0.9
    assert main(["rules", "explain", "grandparent(liz, ?z)", "--rules", str(FIX / "family"), "--facts", str(facts)]) == 1
    text = capsys.readouterr().out
    assert "not proved" in text and "asked because rule G1 needs it to prove grandparent(liz, ?z)" in text


def test_explain_with_rules_language_facts(tmp_path, capsys):
    facts = tmp_path / "extra.rules"
    facts.write_text("fact parent(jim, kim) cf 0.5\n")
    assert main(["rules", "explain", "grandparent(pat, ?z)", "--rules", str(FIX / "family"), "--facts", str(facts)]) == 0
    assert "grandparent(pat, kim)  CF 0.45" in capsys.readouterr().out   # min(0.6, 0.5) x 0.9


def test_explain_bad_input(tmp_path, capsys):
    facts = tmp_path / "f.json"
    facts.write_text('[{"relation": "nope", "args": []}]')
    assert main(["rules", "explain", "grandparent(bob, ?z)", "--rules", str(FIX / "family"), "--facts", str(facts)]) == 2
    assert f"{facts}:1:1: unknown relation 'nope'" in capsys.readouterr().err   # file:line (issue 19)
    facts.write_text("[]")
    assert main(["rules", "explain", "grandparnt(bob", "--rules", str(FIX / "family"), "--facts", str(facts)]) == 2
    assert "cannot read the goal" in capsys.readouterr().err
    assert main(["rules", "explain", "cousin(bob, ?z)", "--rules", str(FIX / "family"), "--facts", str(tmp_path / "x.json")]) == 2
    assert "no such facts file" in capsys.readouterr().err
    assert main(["rules", "explain", "cousin(bob, ?z)", "--rules", str(FIX / "family"), "--facts", str(facts)]) == 2
    assert "unknown relation 'cousin'" in capsys.readouterr().err


def test_check_names_the_relations_chinese_text_cannot_reach_and_the_checking_goals(tmp_path, capsys):
    (tmp_path / "c.rules").write_text(
        'type person "person"\nentity person amy "Amy"\n'
        'relation grade_limit(person, money[EUR]) "approval limit" aka "审批上限"\n'
        'relation can_approve(person, money[EUR]) "may approve"\n'
        'relation desk(person, text) "desk"\n'
        'pattern P_DESK: "{person} 的 办公 桌号 是 {t:text}" -> desk(person, t)\n'
        'goal G_CAN "within the limit": can_approve(?p, ?x) if grade_limit(?p, ?l) and ?x <= ?l\n', encoding="utf-8")
    assert main(["rules", "check", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "checking goal can_approve: its open value is asked of grade_limit" in out
    # desk is named in Chinese by its pattern's words, the limit by its alias
    assert "1 relation(s) with no Chinese name and no Chinese pattern words" in out and out.rstrip().endswith(
        "(add a Chinese `aka`): can_approve")
    assert main(["rules", "check", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["checked_limits"] == {"can_approve": "grade_limit"} and report["no_chinese_name"] == ["can_approve"]
