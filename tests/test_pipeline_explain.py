"""`explain`: why an answer is what it is — the question's parse with relation scores, each goal tried and what became
of it, the proofs set aside as about someone else, each claim's evidence, and why drafts were withheld (issue 47)."""
from __future__ import annotations

import pytest

from api.commands.ask import render_explanation
from api.schemas import AskRequest
from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline_fakes import FixedRetriever, ScriptedGenerator, rulebase_of
from test_pipeline_scope import GLOBAL, HZ, ORG, RULES


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def test_the_explanation_of_a_proved_answer(rb):
    gen = ScriptedGenerator(["The documents do not say."])
    result = Answerer(gen, FixedRetriever([GLOBAL, HZ, ORG]), rb, AnswererConfig(quote_answers=False)).ask(
        "What standby allowance does a Dublin employee get for a weekend day?", AskOptions(explain=True))
    x = result.explain
    assert x["parse"]["about"] == {"day": ["weekend"], "office": ["dublin"]}
    assert [r["relation"] for r in x["parse"]["relations"]][:1] == ["standby_allowance"]
    answered = [g for g in x["goals"] if g["outcome"] == "answered the question"]
    assert [(g["goal"], g["proved"][0]["value"]) for g in answered] == [("standby_allowance(weekend, ?)", "150 EUR")]
    assert x["withheld"] is None and result.status == "verified"
    lines = render_explanation(x)
    assert any("goal standby_allowance(weekend, ?): proves 150 EUR (CF 1.00); answered the question" in ln for ln in lines)


def test_the_explanation_of_a_withheld_draft_says_why(rb):
    gen = ScriptedGenerator(["A weekend day on standby pays 1,000 元 [1]."])
    cfg = AnswererConfig(symbolic_answers=False, quote_answers=False)
    result = Answerer(gen, FixedRetriever([HZ, ORG]), rb, cfg).ask(
        "What does a Dublin employee get for a weekend day on standby?", AskOptions(max_attempts=1, explain=True))
    assert result.status == "abstained"
    [attempt] = result.explain["withheld"]["attempts"]
    assert any("answers for someone else" in g for g in attempt["gaps"])
    assert result.to_dict()["explain"] == result.explain          # JSON-able, as /ask returns it


def test_no_explanation_unless_asked(rb):
    gen = ScriptedGenerator(["The documents do not say."])
    result = Answerer(gen, FixedRetriever([GLOBAL]), rb).ask("What does a weekend day on call pay?")
    assert result.explain is None


def test_the_request_takes_explain_as_a_boolean_only():
    assert AskRequest(question="q?", explain=True).explain is True
    with pytest.raises(ValueError, match="explain"):
        AskRequest(question="q?", explain="very")
