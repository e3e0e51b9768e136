"""Provenance in rules (issue 19 item 2): `from ?doc`, document relations, precedence of evidence."""
import pytest

from symbolic import BackwardChainer, Claim, Fact, ForwardChainer, Provenance, Verifier, load_rulebase, parse_value as v
from symbolic.model import Var
from symbolic.provenance import document_facts, precedence

RULES = '''type tier "city tier"
entity tier t1 "Tier 1"
relation hotel_limit(tier, money[EUR])
relation stated_in_current(tier, money[EUR])
rule R_OLD "A limit only a superseded document states is out of date":
    if hotel_limit(?t, ?x) from ?doc and document_status(?doc, "superseded")
    then violation "{x} for {t} comes from the superseded {doc}"
goal G_CURRENT "A limit stated by a current policy document":
    stated_in_current(?t, ?x) if hotel_limit(?t, ?x) from ?doc and document_status(?doc, "current")
        and document_authority(?doc, "policy")
'''
NEW = Provenance("document", "travel_2025.md", effective_date="2025-01-01", authority="policy")
OLD = Provenance("document", "travel_2023.md", superseded=True, effective_date="2023-01-01", authority="policy")


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    d = tmp_path_factory.mktemp("prov")
    (d / "p.rules").write_text(RULES)
    return load_rulebase(d)


EVIDENCE = [Fact("hotel_limit", ("t1", v("EUR 180")), 1.0, NEW), Fact("hotel_limit", ("t1", v("EUR 160")), 1.0, OLD)]


def test_document_facts_come_from_provenance():
    assert sorted(map(str, document_facts(EVIDENCE))) == [
        "document_authority(travel_2023.md, policy)", "document_authority(travel_2025.md, policy)",
        "document_effective(travel_2023.md, 2023-01-01)", "document_effective(travel_2025.md, 2025-01-01)",
        "document_status(travel_2023.md, superseded)", "document_status(travel_2025.md, current)"]


def test_rules_match_the_document_of_a_fact(rb):
    assert "document_status" not in rb.relations
    r = ForwardChainer(rb.forward_rules).run([*EVIDENCE, *document_facts(EVIDENCE)])
    assert [x.message for x in r.violations] == ["160 EUR for t1 comes from the superseded travel_2023.md"]


def test_goals_bind_the_document_too(rb):
    bc = BackwardChainer(rb.backward_rules, [*EVIDENCE, *document_facts(EVIDENCE)])
    (n,) = bc.prove("stated_in_current", ("t1", Var("x")))
    assert (n.args, n.cf) == (("t1", v("EUR 180")), 1.0)


def test_a_claim_resting_on_the_superseded_value_violates_the_rule(rb):
    # the verifier adds the document facts of its evidence itself
    claim = Claim(Fact("hotel_limit", ("t1", v("EUR 160")), 1.0, Provenance("answer")), "t", 0, 1)
    res = Verifier(rb).verify([claim], EVIDENCE)
    assert res.claims[0].verdict == "contradicted"          # current 180 wins over superseded 160
    assert [x.rule_id for x in res.violations] == ["R_OLD"]  # on the document's fact, not the claim's


def test_precedence_current_then_latest_effective_date():
    a = Fact("p", ("x", 1.0), 1.0, Provenance("document", "a.md", effective_date="2024-01-01"))
    b = Fact("p", ("x", 2.0), 1.0, Provenance("document", "b.md", effective_date="2025-03-01"))
    c = Fact("p", ("x", 3.0), 1.0, Provenance("document", "c.md", superseded=True, effective_date="2026-01-01"))
    match, conflict, notes = precedence([a], [b, c])
    assert (match, conflict) == ([], [b])
    assert notes == ["current evidence wins over superseded evidence",
                     "the latest effective date (2025-03-01) wins over earlier ones"]
    undated = Fact("p", ("x", 4.0), 1.0, Provenance("document", "d.md"))
    assert precedence([a], [undated])[:2] == ([a], [undated])       # no date to compare: both count
