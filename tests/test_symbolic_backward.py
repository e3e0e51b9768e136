"""Backward chaining on the classic family base: expected proofs and hand-computed CFs."""
from pathlib import Path

import pytest

from symbolic import BackwardChainer, Fact, load_rulebase
from symbolic.explain import how_json, how_text, why_text
from symbolic.model import Var

FAMILY = Path(__file__).parent / "fixtures" / "rules" / "family"


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(FAMILY)


def prove(rb, relation, *args, extra=(), **kw):
    bc = BackwardChainer(rb.backward_rules, [*rb.facts, *extra], **kw)
    return {n.args: n for n in bc.prove(relation, tuple(Var(a[1:]) if isinstance(a, str) and a.startswith("?")
                                                         else a for a in args))}


def test_grandparents(rb):
    got = prove(rb, "grandparent", "?x", "?z")
    # G1 cf 0.9: min(parent CFs) x 0.9; tom->liz->bob fails because parent(liz, bob) has CF 0.1 <= 0.2
    assert {k: round(n.cf, 6) for k, n in got.items()} == {
        ("tom", "pat"): 0.9, ("tom", "ann"): 0.72, ("bob", "jim"): 0.54}
    assert got[("tom", "ann")].rule_ids == ["G1"]


def test_recursive_ancestors_with_loop_detection(rb):
    got = prove(rb, "ancestor", "tom", "?z")
    # A1: parent; A2 (cf 0.8): parent and ancestor. tom->jim: 0.8 * (0.8 * min(1, 0.6)) = 0.384
    assert {k[1]: round(n.cf, 6) for k, n in got.items()} == {
        "bob": 1.0, "liz": 0.9, "pat": 0.8, "ann": 0.64, "jim": 0.384}


def test_chained_goals_and_how_explanation(rb):
    node = prove(rb, "relative", "tom", "ann")[("tom", "ann")]
    assert node.cf == pytest.approx(0.36)        # R2 0.5 x G1 (0.8 x 0.9)
    assert node.rule_ids == ["R2", "G1"]
    assert sorted(str(f) for f in node.facts) == ["parent(bob, ann)", "parent(tom, bob)"]
    text = how_text(node)
    assert "by rule R2" in text and "premise CF 0.72 x rule CF 0.50 = 0.36" in text
    j = how_json(node)
    assert j["supports"][0]["rule_id"] == "R2" and j["supports"][0]["premises"][0]["conclusion"] == "grandparent(tom, ann)"


def test_parallel_evidence_combines(rb):
    extra = [Fact("relative", ("tom", "ann"), 0.5)]
    node = prove(rb, "relative", "tom", "ann", extra=extra)[("tom", "ann")]
    assert node.cf == pytest.approx(0.5 + 0.36 - 0.5 * 0.36)     # 0.68
    neg = prove(rb, "relative", "tom", "ann", extra=[Fact("relative", ("tom", "ann"), -0.4)])[("tom", "ann")]
    assert neg.cf == pytest.approx((0.36 - 0.4) / (1 - 0.36))     # mixed signs: -0.0625


def test_negation_as_failure_and_comparison(rb):
    got = prove(rb, "childless", "?x")
    assert {k[0]: round(n.cf, 6) for k, n in got.items()} == {"liz": 0.54, "ann": 0.48, "jim": 0.36}
    sib = prove(rb, "sibling", "ann", "?y")
    assert {k[1]: n.cf for k, n in sib.items()} == {"pat": 0.8}    # ?x != ?y excludes ann herself


def test_depth_limit_and_why(rb):
    got = prove(rb, "ancestor", "tom", "jim", max_depth=2)
    assert got == {}                               # the proof needs depth 4
    bc = BackwardChainer(rb.backward_rules, rb.facts)
    bc.prove("grandparent", ("liz", Var("z")))
    whys = [why_text(a) for a in bc.asked]
    assert whys[0].startswith("grandparent(liz, ?z): not proved")
    assert "asked because rule G1 needs it to prove grandparent(liz, ?z)" in whys[1]


def test_self_recursive_rule_terminates(tmp_path):
    (tmp_path / "r.rules").write_text('type t\nrelation p(t)\nrelation q(t)\nfact q(a) cf 0.7\n'
                                      'goal L1 "p from p" : p(?x) if p(?x)\ngoal L2 "p from q" cf 0.5: p(?x) if q(?x)\n')
    rb = load_rulebase(tmp_path)
    got = prove(rb, "p", "a")
    assert got[("a",)].cf == pytest.approx(0.35)
    bc = BackwardChainer(rb.backward_rules, rb.facts)
    bc.prove("p", ("a",))
    assert any(a.loop for a in bc.asked)
