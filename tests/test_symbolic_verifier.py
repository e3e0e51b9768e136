"""Verifier verdicts of each kind, superseded evidence, extraction in English and Chinese."""
from pathlib import Path

import pytest

from symbolic import Claim, Fact, Provenance, Verifier, load_rulebase, parse_value as v

HR = Path(__file__).parent / "fixtures" / "rules" / "hr"
DOC = Provenance("document", "handbook.md")
OLD = Provenance("document", "handbook-2019.md", superseded=True)


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(HR)


def claims_from(rb, answer):
    return [Claim(f, answer[s:e], s, e) for f, s, e in rb.extract(answer, source=Provenance("answer"))]


def evidence_from(rb, text, source=DOC):
    return [f for f, _, _ in rb.extract(text, source=source)]


def test_extraction_english_and_chinese(rb):
    got = rb.extract("Full-time employees get 2 weeks of annual leave. 实习生的年假为五天。兼职员工的试用期为两个月。",
                     source=Provenance("document", "h.md", start=100))
    assert [(str(f), s, e) for f, s, e in got] == [
        ("annual_leave(full_time_employee, 14 days)", 0, 47), ("annual_leave(intern, 5 days)", 49, 58),
        ("probation(part_timer, 2 months)", 59, 71)]
    assert got[0][0].provenance.start == 100 and got[0][0].provenance.end == 147   # offset into the document
    assert got[0][0].provenance.rule_id == "P1"


def test_supported_with_unit_normalisation(rb):
    ev = evidence_from(rb, "Full time staff are entitled to 14 days of annual leave.")
    res = Verifier(rb).verify(claims_from(rb, "全职员工的年假为两周。"), ev)
    (c,) = res.claims
    assert (c.verdict, c.cf, res.ok) == ("supported", 1.0, True)
    assert "handbook.md" in c.explanation


def test_contradicted(rb):
    ev = evidence_from(rb, "Full-time employees get 20 days of annual leave.")
    (c,) = Verifier(rb).verify(claims_from(rb, "Full-time employees get 15 days of annual leave."), ev).claims
    assert c.verdict == "contradicted" and c.cf == 1.0
    assert c.trace["conflicting"][0]["text"] == "annual_leave(full_time_employee, 20 days)"


def test_unsupported(rb):
    ev = evidence_from(rb, "Interns get 10 days of annual leave.")
    res = Verifier(rb).verify(claims_from(rb, "Full-time employees get 15 days of annual leave."), ev)
    assert res.claims[0].verdict == "unsupported" and not res.ok
    assert "no evidence mentions annual_leave for full_time_employee" in res.claims[0].explanation


def test_violates_rule(rb):
    ev = evidence_from(rb, "Interns get 3 days of annual leave.")
    res = Verifier(rb).verify(claims_from(rb, "Interns get 3 days of annual leave."), ev)
    (c,) = res.claims
    assert c.verdict == "violates_rule" and c.rule_ids == ["R1"]
    assert "intern is given only 3 days of annual leave" in c.explanation
    # only the claim's own fact is run through the single-condition rule R1 (evidence cannot change it)
    assert [(f.provenance.source, str(f)) for x in res.violations for f in x.facts] == \
        [("answer", "annual_leave(intern, 3 days)")]


def test_joined_rule_sees_evidence(tmp_path):
    (tmp_path / "j.rules").write_text(
        'type t\nrelation cap(t, duration[day])\nrelation leave(t, duration[day])\n'
        'rule J1 "Leave may not exceed the cap": if leave(?w, ?d) and cap(?w, ?c) and ?d > ?c\n'
        '  then violation "{w}: {d} exceeds the cap {c}"\n')
    rb = load_rulebase(tmp_path)
    claim = Claim(Fact("leave", ("ann", v("3 weeks")), 1.0, Provenance("answer")), "3 weeks", 0, 7)
    res = Verifier(rb).verify([claim], [Fact("cap", ("ann", v("20 days")), 0.8, DOC)])
    (c,) = res.claims
    assert (c.verdict, c.rule_ids, c.cf) == ("violates_rule", ["J1"], 0.8)
    assert "ann: 3 weeks exceeds the cap 20 days" in c.explanation
    ok = Verifier(rb).verify([claim], [Fact("cap", ("ann", v("30 days")), 0.8, DOC)]).claims[0]
    assert ok.verdict == "unsupported"


def test_probation_violation_in_chinese(rb):
    res = Verifier(rb).verify(claims_from(rb, "实习生的试用期为八个月。"), [])
    assert [(c.verdict, c.rule_ids) for c in res.claims] == [("violates_rule", ["R2"])]


def test_current_evidence_wins_over_superseded(rb):
    current = evidence_from(rb, "Interns get 10 days of annual leave.")
    old = evidence_from(rb, "Interns get 7 days of annual leave.", OLD)
    ver = Verifier(rb)
    old_claim = ver.verify(claims_from(rb, "Interns get 7 days of annual leave."), current + old).claims[0]
    assert old_claim.verdict == "contradicted" and old_claim.cf == 1.0
    new_claim = ver.verify(claims_from(rb, "Interns get 10 days of annual leave."), current + old).claims[0]
    assert new_claim.verdict == "supported" and new_claim.cf == 1.0
    only_old = ver.verify(claims_from(rb, "Interns get 7 days of annual leave."), old).claims[0]
    assert only_old.verdict == "supported" and only_old.cf == pytest.approx(0.5)   # superseded: half CF


def test_backward_chaining_supports_a_claim_with_rule_ids(rb):
    ev = evidence_from(rb, "Interns get 10 days of annual leave.") + [Fact("employed", ("intern",), 1.0, DOC)]
    claim = Claim(Fact("eligible_for_leave", ("intern",), 1.0, Provenance("answer")), "interns are eligible", 0, 20)
    (c,) = Verifier(rb).verify([claim], ev).claims
    assert c.verdict == "supported"
    assert c.cf == pytest.approx(0.9 + 0.6 - 0.9 * 0.6)   # G1 (0.9) and G2 (0.6) combined: 0.96
    assert c.rule_ids == ["G1", "G2"]
    assert "by rule G1" in c.explanation and c.trace["proofs"][0]["supports"][0]["rule_id"] == "G1"


def test_conflicting_evidence_of_equal_strength_is_unsupported(rb):
    ev = evidence_from(rb, "Interns get 10 days of annual leave.") + \
        [Fact("annual_leave", ("intern", v("12 days")), 1.0, Provenance("document", "memo.md"))]
    (c,) = Verifier(rb).verify(claims_from(rb, "Interns get 10 days of annual leave."), ev).claims
    assert c.verdict == "unsupported" and c.trace["claim_cf"] == 0.0


def test_to_dict_and_explain_are_json_ready(rb):
    import json
    res = Verifier(rb).verify(claims_from(rb, "Interns get 3 days of annual leave. 全职员工的年假为两周。"), [])
    d = json.loads(json.dumps(res.to_dict()))
    assert [c["verdict"] for c in d["claims"]] == ["violates_rule", "unsupported"]
    assert "NOT OK: 0/2 claims supported" in res.explain()


def test_bad_input_is_rejected_clearly(rb):
    with pytest.raises(TypeError, match="Claim objects"):
        Verifier(rb).verify(["annual leave is 5 days"], [])
    with pytest.raises(TypeError, match="evidence must be Fact"):
        Verifier(rb).verify([], ["x"])


def test_violation_indices_follow_the_callers_evidence_then_claims_order(tmp_path):
    (tmp_path / "j.rules").write_text(
        'type t\nrelation cap(t, duration[day])\nrelation leave(t, duration[day])\nrelation note(t, text)\n'
        'fact cap(cy, 10 days)\n'
        'rule J1 "Leave may not exceed the cap": if leave(?w, ?d) and cap(?w, ?c) and ?d > ?c\n'
        '  then violation "{w}: {d} exceeds the cap {c}"\n')
    rb = load_rulebase(tmp_path)
    # `note` is used by no rule and `cap` sorts before `leave`: the forward chainer's own input list
    # would be [cap(bob), cap(ann), cap(cy) from the rule base, leave(bob), leave(ann), leave(cy)]
    evidence = [Fact("note", ("ann", "see HR"), 1.0, DOC), Fact("cap", ("bob", v("30 days")), 1.0, DOC),
                Fact("cap", ("ann", v("20 days")), 0.8, DOC)]
    claims = [Claim(Fact("leave", (who, v(d)), 1.0, Provenance("answer")), d, 0, 7)
              for who, d in (("bob", "1 week"), ("ann", "3 weeks"), ("cy", "2 weeks"))]
    res = Verifier(rb).verify(claims, evidence)
    assert [c.verdict for c in res.claims] == ["unsupported", "violates_rule", "violates_rule"]
    ann, cy = sorted(res.violations, key=lambda x: x.message)
    assert ann.message == "ann: 3 weeks exceeds the cap 20 days"
    assert ann.facts[0] is claims[1].fact and ann.facts[1] is evidence[2]     # the caller's own objects
    assert ann.fact_ids == [2, 4]             # evidence[2], then claims[1] at len(evidence) + 1
    assert ann.fact_sources == [[4], [2]] and ann.claim_ids == [1] and ann.from_claim == [True, False]
    # a rule-base fact is matched (in .facts) but is no index into the caller's lists
    assert [str(f) for f in cy.facts] == ["leave(cy, 2 weeks)", "cap(cy, 10 days)"]
    assert cy.fact_ids == [5] and cy.fact_sources == [[5], []]
    assert cy.claim_ids == [2] and cy.from_claim == [True, False]
    d = {x["message"]: (x["fact_ids"], x["claim_ids"], x["from_claim"]) for x in res.to_dict()["violations"]}
    assert d == {ann.message: ([2, 4], [1], [True, False]), cy.message: ([5], [2], [True, False])}


def test_violation_on_a_fact_derived_from_a_claim_is_the_claims():
    rb = load_rulebase(Path(__file__).parent / "fixtures" / "rules" / "forward.rules")
    evidence = [Fact("salary", ("bo", v("29000 元")), 1.0, DOC), Fact("bonus", ("bo", v("2000 元")), 1.0, DOC),
                Fact("bonus", ("amy", v("2000 元")), 0.9, DOC)]
    claim = Claim(Fact("salary", ("amy", v("28000 元")), 1.0, Provenance("answer")), "28000", 0, 5)
    res = Verifier(rb).verify([claim], evidence)
    by_who = {x.message.split(" ")[0]: x for x in res.violations}
    assert sorted(by_who) == ["amy", "bo"] and all(x.rule_id == "P1" for x in res.violations)
    amy, bo = by_who["amy"], by_who["bo"]
    # P1 matched total_pay(amy, 30000 CNY), derived by T1 from the claim and evidence[2]
    assert [(str(f), f.provenance.source) for f in amy.facts] == [("total_pay(amy, 30000 CNY)", "derived")]
    assert amy.from_claim == [True] and amy.claim_ids == [0]
    assert amy.fact_sources == [[2, 3]] and amy.fact_ids == [2, 3]
    # bo's total rests on evidence alone: about the documents, attributed to no claim
    assert bo.from_claim == [False] and bo.claim_ids == [] and bo.fact_ids == [0, 1]
    (c,) = res.claims
    assert (c.verdict, c.rule_ids, c.cf) == ("violates_rule", ["P1"], pytest.approx(0.9))
    assert "amy earns 30000 CNY in total" in c.explanation and "bo earns" not in c.explanation


def test_a_goal_sees_what_forward_rules_derive_for_its_premises(tmp_path):
    # issue 48: a goal proving a claim from a relation forward rules derive failed unless some forward rule
    # named the claim's own relation (the forward run only ran rules relevant to the claims' relations)
    from symbolic import Claim, Fact, Provenance, Verifier, load_rulebase, parse_value
    (tmp_path / "a.rules").write_text(
        'relation employee(p: text)\nrelation eligible(p: text)\nrelation bonus(p: text, x: money[EUR])\n'
        'rule R_ELIG "employees are eligible": if employee(?p) then assert eligible(?p)\n'
        'goal G_BONUS "an eligible person gets EUR 100": bonus(?p, "EUR 100") if eligible(?p)\n', encoding="utf-8")
    rb = load_rulebase(tmp_path)
    claim = Claim(Fact("bonus", ("ann", parse_value("EUR 100")), 1.0, Provenance("answer")), "ann gets EUR 100", 0, 16)
    [verdict] = Verifier(rb).verify([claim], [Fact("employee", ("ann",), 1.0)]).claims
    assert verdict.verdict == "supported" and verdict.rule_ids == ["G_BONUS"]
    [none] = Verifier(rb).verify([claim], [Fact("employee", ("bob",), 1.0)]).claims
    assert none.verdict == "unsupported"
