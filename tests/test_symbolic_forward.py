"""Forward chaining through experta: arithmetic, negation, salience, CFs, termination of loops."""
from pathlib import Path

import pytest

from symbolic import Fact, ForwardChainer, load_rulebase, parse_value as v

RULES = Path(__file__).parent / "fixtures" / "rules"


@pytest.fixture(scope="module")
def fc():
    return ForwardChainer(load_rulebase(RULES / "forward.rules").forward_rules)


def facts(*items):
    return [Fact(rel, tuple(args), cf) for rel, args, cf in items]


def test_arithmetic_derivation_with_money(fc):
    r = fc.run(facts(("salary", ("amy", v("20000 元")), 1.0), ("bonus", ("amy", v("¥5000")), 0.8)))
    assert [(str(d), d.cf) for d in r.derived] == [("total_pay(amy, 25000 CNY)", 0.8)]
    assert r.derived[0].provenance.rule_id == "T1"


def test_percentage_comparison_and_negation(fc):
    base = facts(("salary", ("amy", v("20000 元")), 1.0), ("bonus", ("amy", v("5000 元")), 0.8))
    r = fc.run(base)
    assert [(x.rule_id, round(x.cf, 6)) for x in r.violations] == [("B1", 0.72)]   # min(1, 0.8) x 0.9
    assert r.violations[0].message == "amy: bonus 5000 CNY is more than 20% of salary 20000 CNY and was not approved"
    assert r.violations[0].fact_ids == [0, 1]
    approved = fc.run(base + facts(("approved", ("amy",), 1.0)))
    assert approved.violations == []                       # `not approved(?e)` no longer holds
    small = fc.run(facts(("salary", ("bo", v("20000 元")), 1.0), ("bonus", ("bo", v("4000 元")), 1.0)))
    assert small.violations == []                          # exactly 20% is not above 20%


def test_duration_units_and_date_arithmetic(fc):
    r = fc.run(facts(("manager", ("amy",), 1.0), ("leave", ("amy", v("10 days")), 1.0),
                     ("manager", ("cy",), 1.0), ("leave", ("cy", v("两周")), 1.0),
                     ("start_date", ("bo", v("2024-01-01")), 1.0), ("review_date", ("bo", v("2024-08-01")), 1.0),
                     ("start_date", ("di", v("2024-01-01")), 1.0), ("review_date", ("di", v("2024-06-01")), 1.0)))
    assert sorted(x.rule_id + ":" + x.message.split(" ")[0] for x in r.violations) == ["D1:bo:", "L1:amy"]


def test_derived_fact_feeds_another_rule_and_weak_premise_does_not_fire(fc):
    r = fc.run(facts(("salary", ("amy", v("28000 元")), 1.0), ("bonus", ("amy", v("2000 元")), 1.0)))
    assert [x.rule_id for x in r.violations] == ["P1"]
    assert r.violations[0].fact_ids == [0, 1]              # traced back through total_pay
    assert r.violations[0].fact_sources == [[0, 1]]        # per matched fact (total_pay): its inputs
    weak = fc.run(facts(("salary", ("amy", v("28000 元")), 0.2), ("bonus", ("amy", v("2000 元")), 1.0)))
    assert weak.derived == [] and weak.violations == []    # premise CF 0.2 does not hold


def test_relevance_filter_only_activates_rules_for_the_focus(fc):
    r = fc.run(facts(("manager", ("amy",), 1.0)), focus={"manager"})
    assert r.rule_ids == ["L1"]
    assert set(fc.relevant_rules({"bonus"})) == {"T1", "B1", "P1"}


def test_looping_rules_are_stopped_and_reported():
    rb = load_rulebase(RULES / "loop.rules")
    assert "C1 form a cycle" in str(rb.warnings[0])
    r = ForwardChainer(rb.forward_rules, max_firings=50).run([Fact("count", (0.0,))])
    assert r.halted is not None and "C1 (51 firings)" in r.halted
    assert len(r.derived) == 50 and str(r.derived[-1]) == "count(50)"
    r2 = ForwardChainer(rb.forward_rules, max_firings=10_000, max_new_facts=20).run([Fact("count", (0.0,))])
    assert "more than 20 derived facts" in r2.halted and len(r2.derived) == 20


def test_salience_orders_firing(tmp_path):
    (tmp_path / "s.rules").write_text(
        'type t\nrelation a(t)\nrelation log(t, number)\nrelation n(number)\n'
        'rule LOW "low" salience 1: if a(?x) and not log(?x, _) then assert log(?x, 1)\n'
        'rule HIGH "high" salience 9: if a(?x) and not log(?x, _) then assert log(?x, 2)\n')
    r = ForwardChainer(load_rulebase(tmp_path).forward_rules).run([Fact("a", ("k",))])
    assert [str(d) for d in r.derived] == ["log(k, 2)"]    # HIGH fires first and disables LOW
