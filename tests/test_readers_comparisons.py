"""A comparison the question states ("why does the van carry more than the truck?") is a premise: where the rules
prove both values and they say the other way, the answer says it is not so, with both values (issue 47, class 4;
blind/08 fp-04)."""
from __future__ import annotations

import pytest
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline.question.focus import parse_question
from pipeline.readers.comparisons import stated_comparison
from pipeline.readers.premises import disproved_comparison

RULES = r"""
type vehicle "vehicle"
entity vehicle van "Transit van" aka "van", "厢式货车"
entity vehicle truck "box truck" aka "truck", "卡车"
relation payload(v: vehicle, m: quantity[kg]) "rated payload" aka "carry", "载重"
pattern P: "\| {v:vehicle} \| {m:quantity} \|" -> payload(v, m)
"""
SHEET = FakePassage("fleet.md", "| Vehicle | Payload |\n|---|---|\n| van | 800 kg |\n| truck | 1,500 kg |\n",
                    heading_path=["Fleet datasheet"])


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def test_the_two_sides_and_which_is_said_greater(rb):
    c = stated_comparison(parse_question("Why does the van carry more than the truck?", rb))
    assert c is not None and (c.greater.args, c.lesser.args, c.said) == (("van",), ("truck",), "more than")
    c = stated_comparison(parse_question("Why does the van carry less than the truck?", rb))
    assert c is not None and (c.greater.args, c.lesser.args) == (("truck",), ("van",))
    c = stated_comparison(parse_question("为什么厢式货车的载重比卡车高？", rb))
    assert c is not None and (c.greater.args, c.lesser.args) == (("van",), ("truck",))
    # "more than" a number compares nothing the question names twice
    assert stated_comparison(parse_question("Can the van carry more than 500 kg?", rb)) is None


def test_a_comparison_the_values_refute_is_corrected_with_both(rb):
    from pipeline.evidence.passage_facts import extract_evidence
    facts, _ = extract_evidence([SHEET], rb)
    wrong = disproved_comparison(parse_question("Why does the van carry more than the truck?", rb), rb, facts)
    assert [(c.proof.goal.args, str(c.proof.value), str(c.stated)) for c in wrong] == \
        [(("van",), "800 kg", "1500 kg"), (("truck",), "1500 kg", "800 kg")]
    assert disproved_comparison(parse_question("Why does the truck carry more than the van?", rb), rb, facts) == []
    # a yes/no question asserts nothing
    assert disproved_comparison(parse_question("Does the van carry more than the truck?", rb), rb, facts) == []

    result = Answerer(ScriptedGenerator(["The van carries more because it is lighter [1]."] * 3),
                      FixedRetriever([SHEET]), rb, AnswererConfig(quote_answers=False)).ask(
        "Why does the van carry more than the truck?", AskOptions(max_attempts=2))
    assert result.status in ("verified", "regenerated"), result.reason
    assert "800 kg" in result.answer and "1,500 kg" in result.answer and result.answer.startswith("That is not right")
