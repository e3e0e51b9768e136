"""Regressions for issue 19's bugs B1-B6, each written before its fix (CFs hand-computed, MYCIN)."""
import datetime as dt
from pathlib import Path

import pytest

from symbolic import BackwardChainer, Claim, Fact, ForwardChainer, Provenance, Verifier, load_rulebase, parse_value as v
from symbolic.model import Var
from symbolic.terms import arith
from symbolic.values import Date

RULES = Path(__file__).parent / "fixtures" / "rules" / "bugs"
DOC = Provenance("document", "hr/staff.md")


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(RULES)


def claim(rel, *args):
    return Claim(Fact(rel, args, 1.0, Provenance("answer")), f"{rel}{args}", 0, 1)


def test_b1_a_derived_fact_equal_to_the_claim_supports_it(rb):
    # start(amy, 2024-03-01) CF 0.9 -> D_ANNIV (cf 0.8): anniversary(amy, 2025-03-01) CF 0.9 x 0.8 = 0.72.
    # The claim states the same fact; it used to be dropped as "already known" (the claim's own key).
    ev = [Fact("start", ("amy", v("2024-03-01")), 0.9, DOC)]
    (c,) = Verifier(rb).verify([claim("anniversary", "amy", v("2025-03-01"))], ev).claims
    assert c.verdict == "supported" and c.cf == pytest.approx(0.72)
    wrong = Verifier(rb).verify([claim("anniversary", "amy", v("2025-04-01"))], ev).claims[0]
    assert wrong.verdict == "contradicted" and wrong.cf == pytest.approx(0.72)


def test_b2_negation_waits_for_every_rule_deriving_what_it_negates(rb):
    # C_OVERTIME has the higher salience, but `not exempt(bob)` must see D_EXEMPT's conclusion
    fc = ForwardChainer(rb.forward_rules)
    facts = [Fact("contractor", ("bob",), 1.0, DOC), Fact("overtime", ("bob", v("12 hours")), 1.0, DOC),
             Fact("overtime", ("cho", v("12 hours")), 1.0, DOC)]
    r = fc.run(facts)
    assert [x.message for x in r.violations] == ["cho: 12 hours of overtime needs approval"]
    r2 = fc.run(list(reversed(facts)))       # the order facts arrive in changes nothing
    assert [x.message for x in r2.violations] == ["cho: 12 hours of overtime needs approval"]


def test_b3_single_condition_derivations_feed_the_verifier(rb):
    # contractor(bob) is evidence only through D_EXEMPT (one condition): it used to be filtered out of the
    # forward run, so `not exempt(bob)` held and the claim was a false violates_rule.
    ev = [Fact("contractor", ("bob",), 1.0, DOC)]
    (c,) = Verifier(rb).verify([claim("overtime", "bob", v("12 hours"))], ev).claims
    assert c.verdict == "unsupported"
    (c2,) = Verifier(rb).verify([claim("overtime", "cho", v("12 hours"))], ev).claims
    assert c2.verdict == "violates_rule" and c2.rule_ids == ["C_OVERTIME"]


@pytest.mark.parametrize("start,months,end", [
    ("2023-05-30", 24, "2025-05-30"), ("2024-01-31", 1, "2024-02-29"), ("2023-01-31", 1, "2023-02-28"),
    ("2024-03-31", -1, "2024-02-29"), ("2024-12-15", 1, "2025-01-15"), ("2024-02-29", 12, "2025-02-28"),
])
def test_b4_month_arithmetic_is_calendar_correct(start, months, end):
    op = "+" if months > 0 else "-"
    assert arith(op, v(start), v(f"{abs(months)} months")) == Date(dt.date.fromisoformat(end))


def test_b5_premise_order_does_not_matter(rb):
    # tenure(amy, 6 years) CF 1.0; the comparison written first still sees ?y bound: 1.0 x 0.9 = 0.9
    bc = BackwardChainer(rb.backward_rules, [Fact("tenure", ("amy", v("6 years")), 1.0, DOC),
                                             Fact("tenure", ("ben", v("2 years")), 1.0, DOC)])
    nodes = bc.prove("senior", (Var("who"),))
    assert [(n.args, round(n.cf, 6)) for n in nodes] == [(("amy",), 0.9)]


def test_b6_negation_sees_evidence_through_chains_of_derivations(tmp_path):
    # c(x) -> d(x) -> e(x), each by a one-condition rule; `not e(?x)` must see e derived from the evidence
    # c(x), wherever in the evidence list it comes (the pipeline passes every KB fact, retrieved or not)
    (tmp_path / "r.rules").write_text(
        'type t\nrelation c(t)\nrelation d(t)\nrelation e(t)\nrelation claim_rel(t, number)\n'
        'rule CD "c gives d": if c(?x) then assert d(?x)\n'
        'rule DE "d gives e": if d(?x) then assert e(?x)\n'
        'rule NE "claims about x need e" salience 50: if claim_rel(?x, ?n) and not e(?x) then violation "no e for {x}"\n')
    rb = load_rulebase(tmp_path)
    ev = [Fact("claim_rel", ("other", 1.0), 1.0, DOC)] * 3 + [Fact("c", ("k",), 1.0, DOC)]
    (ok,) = Verifier(rb).verify([claim("claim_rel", "k", 1.0)], ev).claims
    assert ok.verdict == "unsupported"
    (bad,) = Verifier(rb).verify([claim("claim_rel", "j", 1.0)], ev).claims
    assert bad.verdict == "violates_rule"


def test_a_cycle_through_not_is_a_warning_and_salience_orders_it(tmp_path):
    (tmp_path / "s.rules").write_text(
        'type t\nrelation a(t)\nrelation log(t, number)\n'
        'rule LOW "low" salience 1: if a(?x) and not log(?x, _) then assert log(?x, 1)\n'
        'rule HIGH "high" salience 9: if a(?x) and not log(?x, _) then assert log(?x, 2)\n')
    rb = load_rulebase(tmp_path)
    (w,) = [w for w in rb.warnings if "through `not`" in w.message]
    assert str(w).startswith(f"{tmp_path / 's.rules'}:4:6: warning: rules HIGH, LOW form a cycle through `not`")
    assert [str(d) for d in ForwardChainer(rb.forward_rules).run([Fact("a", ("k",))]).derived] == ["log(k, 2)"]
