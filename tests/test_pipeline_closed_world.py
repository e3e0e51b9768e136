"""A proof through `not` over pattern-read facts is a closed-world assumption (issue 47 class 2): shown as one in
HOW, warned about by rules check, and set aside where the retrieved text pairs the subject with another value."""
from __future__ import annotations

import pytest

from pipeline.evidence.gather import gather
from pipeline.evidence.kb_facts import KBFactCache
from pipeline_fakes import FakePassage, FixedRetriever, rulebase_of

RULES = r"""
type region "region"
entity region north "North"
entity region south "South"
entity region east "East"
relation premium_region(r: region) "premium region"
relation rate(r: region, x: money[EUR]) "rate" aka "regional rate"
pattern PP: "{r:region} is a premium region" -> premium_region(r)
goal G_STD "a region not in the premium table gets the standard rate": rate(?r, "EUR 10") if not premium_region(?r)
goal G_PREM "a premium region gets EUR 20": rate(?r, "EUR 20") if premium_region(?r)
"""
RATES = FakePassage("rates.md", "South is a premium region.\n\n| Region | Rate (EUR) |\n|---|---|\n| North | 20 |\n",
                    heading_path=["Regional rates"])


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def test_rules_check_warns_and_how_shows_the_assumption(rb):
    assert any("goal G_STD: `not premium_region(…)` is a closed-world assumption" in str(w) for w in rb.warnings)
    ctx = gather("What is the regional rate for East?", 5, FixedRetriever([RATES]), rb, KBFactCache())
    assert ctx.proof is not None and str(ctx.proof.value) == "10 EUR"
    assert "not premium_region(east)  holds (closed world: no fact states it)" in ctx.proof.how


def test_a_closed_world_proof_the_text_contradicts_is_set_aside(rb):
    ctx = gather("What is the regional rate for North?", 5, FixedRetriever([RATES]), rb, KBFactCache())
    assert ctx.proof is None
    assert ctx.out_of_scope == [
        "a proof of rate(north, 10 EUR) set aside: it rests on `not premium_region(north)`, a closed-world "
        "assumption over facts the patterns read, and rates.md pairs it with 20 EUR ('| North | 20 |')"]
    south = gather("What is the regional rate for South?", 5, FixedRetriever([RATES]), rb, KBFactCache())
    assert south.proof is not None and str(south.proof.value) == "20 EUR" and south.out_of_scope == []
