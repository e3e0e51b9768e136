"""Goals that prove a claim's own value (issue 19 item 1): variables of a goal's conclusion that no premise
binds come from the claim, and the premises check them. CFs hand-computed (MYCIN)."""
from pathlib import Path

import pytest

from symbolic import BackwardChainer, Claim, Fact, Provenance, RuleErrors, Verifier, load_rulebase, parse_value as v
from symbolic.model import Var

RULES = Path(__file__).parent / "fixtures" / "rules" / "claimgoals"
DOC = Provenance("document", "hr/grades.md")


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(RULES)


def verdict(rb, evidence, rel, *args):
    (c,) = Verifier(rb).verify([Claim(Fact(rel, args, 1.0, Provenance("answer")), "t", 0, 1)], evidence).claims
    return c


EV = [Fact("grade_of", ("amy", "g3"), 0.8, DOC), Fact("tenure", ("amy", v("6 years")), 1.0, DOC)]


def test_a_claim_within_the_limit_is_supported(rb):
    # premise CF = min(0.8 grade_of, 1.0 approval_limit, comparison holds) = 0.8; x rule CF 0.9 = 0.72
    c = verdict(rb, EV, "can_approve", "amy", v("EUR 3000"))
    assert (c.verdict, round(c.cf, 6), c.rule_ids) == ("supported", 0.72, ["G_APPROVE"])
    assert "G_APPROVE" in c.explanation and "3000 EUR <= 5000 EUR" in c.explanation


def test_a_claim_above_the_limit_is_contradicted_by_a_negative_goal(rb):
    # G_APPROVE_NOT: premise CF 0.8 x rule CF -1.0 = -0.8 for the claimed statement -> contradicted, CF 0.8
    c = verdict(rb, EV, "can_approve", "amy", v("EUR 9000"))
    assert (c.verdict, round(c.cf, 6), c.rule_ids) == ("contradicted", 0.8, ["G_APPROVE_NOT"])


def test_a_value_the_goal_equates_is_checked(rb):
    assert verdict(rb, EV, "leave_days", "amy", v("30 days")).verdict == "supported"
    assert verdict(rb, EV, "leave_days", "amy", v("25 days")).verdict == "unsupported"


def test_an_open_question_cannot_enumerate_claim_values(rb):
    # asked with the amount open, G_APPROVE has nothing to check: no answer, no error
    bc = BackwardChainer(rb.backward_rules, [*rb.facts, *EV])
    assert bc.prove("can_approve", ("amy", Var("x"))) == []
    (n,) = bc.prove("can_approve", ("amy", v("EUR 5000")))
    assert round(n.cf, 6) == 0.72


def test_a_conclusion_variable_no_premise_mentions_is_still_an_error(tmp_path):
    (tmp_path / "g.rules").write_text('type t\nrelation p(t, number)\nrelation q(t)\n'
                                      'goal G "g": p(?a, ?n) if q(?a)\n')
    with pytest.raises(RuleErrors) as err:
        load_rulebase(tmp_path)
    assert ":4:19: unbound variable ?n in the conclusion of goal G: no premise binds or tests it" in str(err.value)
