"""Goals that compute their conclusion's value (`stay_cost(?c, ?n, ?x * ?n) if nightly_limit(?c, ?x)`): the
checker's rules for where arithmetic may stand, the chainer's answers, the verifier's verdicts. Totals and
CFs hand-computed."""
from __future__ import annotations

import pytest

from symbolic import BackwardChainer, Claim, Fact, Provenance, RuleErrors, Verifier, load_rulebase, parse_value as v
from symbolic.model import Var
from pipeline_fakes import rulebase_of

RULES = """
type city "city"
entity city paris "Paris"
entity city rome "Rome"
relation nightly_limit(city, money[EUR]) "hotel limit per night"
relation stay_cost(city, nights: number, money[EUR]) "hotel stay cost"
relation trip_allowance(trip: duration[day], money[EUR]) "trip allowance"
relation daily_rate(city, money[EUR]) "daily rate"
goal G_STAY "a stay costs its nights times the nightly limit" cf 0.9:
    stay_cost(?c, ?n, ?x * ?n) if nightly_limit(?c, ?x) and ?n > 0
goal G_TRIP "arrival and departure days at half the rate, the days between at the full rate":
    trip_allowance(?d, ?r + ?r * (?d / 1 day - 2)) if daily_rate(paris, ?r) and ?d >= 2 days
"""
DOC = Provenance("document", "travel.md")
EV = [Fact("nightly_limit", ("paris", v("EUR 180")), 0.8, DOC), Fact("daily_rate", ("paris", v("EUR 52")), 1.0, DOC)]


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("computed"))


def test_the_chainer_computes_the_open_value(rb):
    bc = BackwardChainer(rb.backward_rules, EV)
    (n,) = bc.prove("stay_cost", ("paris", v("4"), Var("x")))
    # 4 x EUR 180; CF = premise 0.8 x rule 0.9
    assert n.args[-1] == v("EUR 720") and round(n.cf, 6) == 0.72
    (t,) = bc.prove("trip_allowance", (v("3 days"), Var("x")))
    assert t.args[-1] == v("EUR 104")                  # 52 + 52 x (3 - 2)
    assert bc.prove("trip_allowance", (v("1 day"), Var("x"))) == []   # the premise's test fails
    assert bc.prove("stay_cost", ("rome", v("4"), Var("x"))) == []    # no nightly limit for Rome


def test_a_claimed_total_is_checked_against_the_computed_one(rb):
    def verdict(value: str) -> str:
        claim = Claim(Fact("stay_cost", ("paris", v("4"), v(value)), 1.0, Provenance("answer")), "t", 0, 1)
        (c,) = Verifier(rb).verify([claim], EV).claims
        return c.verdict
    assert verdict("EUR 720") == "supported"
    assert verdict("EUR 700") != "supported"
    bc = BackwardChainer(rb.backward_rules, EV)
    assert bc.prove("stay_cost", ("paris", v("4"), v("EUR 700"))) == []   # the computed instance is not asked


@pytest.mark.parametrize("goal, message", [
    ('goal G "g": stay_cost(?c, ?n + 1, ?x) if nightly_limit(?c, ?x) and ?n > 0',
     ":2:30: arithmetic is only allowed in comparisons, in what a rule asserts and in the value a goal concludes"),
    ('goal G "g": stay_cost(?c, ?n, ?x * ?x) if nightly_limit(?c, ?x) and ?n > 0',
     "cannot multiply money by money"),
    ('goal G "g": stay_cost(?c, ?n, ?n * 2) if nightly_limit(?c, ?x) and ?n > 0',
     "type mismatch in the value goal G computes: expected money, got number"),
])
def test_misplaced_or_mistyped_arithmetic_is_an_error_with_its_place(tmp_path, goal, message):
    decls = [ln for ln in RULES.strip().splitlines() if ln.startswith(("type", "entity", "relation"))]
    (tmp_path / "bad.rules").write_text("\n".join([decls[0], goal, *decls[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(RuleErrors) as err:
        load_rulebase(tmp_path)
    assert message in str(err.value)
