"""A question whose premise the rules disprove and which asks something else besides: the correction first, then
the source statement that answers the rest, the two checked as one answer."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.readers.premises import disproved_premises, rest_of_question
from pipeline.generate.prompts import ABSTAIN_SENTINEL
from pipeline.question.focus import parse_question
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

RULES = """
type product "product"
entity product ax_200 "AX-200"
relation payload(p: product, m: quantity[kg]) "rated payload"
relation top_speed(p: product, v: quantity[m/s]) "top speed"
pattern P_PAYLOAD: "{product} ... payload (of|is) {m:quantity}" -> payload(product, m)
pattern P_SPEED: "{product} ... top speed (of|is) {v:quantity}" -> top_speed(product, v)
"""
AX = FakePassage("ax200.md", "The AX-200 has a rated payload of 200 kg.", 0.5, chunk_id="ax")
# what the rules hold no relation for: only a quote of it answers
BATTERY = FakePassage("battery.md", "Battery service. The AX-200 battery pack must be replaced every 36 months of "
                      "operation. Replacement packs are shipped within 5 days.", 0.4, start=100, chunk_id="bat")
KB = [AX, BATTERY]
ASK = "The AX-200 has a rated payload of 300 kg; how long does its battery pack last before it is replaced?"


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def focus_and_corrections(rb, question):
    facts = KBFactCache().get(FixedRetriever(KB), rb).facts
    focus = parse_question(question, rb)
    return focus, disproved_premises(focus, rb, facts)


def test_the_rest_of_the_question_is_what_its_asking_clause_asks_besides_the_premise(rb):
    focus, corrections = focus_and_corrections(rb, ASK)
    rest = rest_of_question(focus, corrections)
    assert rest is not None and "300" not in rest.question and rest.question.endswith(
        "how long does its battery pack last before it is replaced?")
    assert all(g.relation != "payload" for g in rest.goals)
    # a question that asks only about its premise has no rest
    focus, corrections = focus_and_corrections(rb, "Why does the AX-200 have a rated payload of 300 kg?")
    assert corrections and rest_of_question(focus, corrections) is None
    focus, corrections = focus_and_corrections(rb, "How long does the battery pack last before it is replaced?")
    assert rest_of_question(focus, corrections) is None


def make(rb, answers, **config):
    gen = ScriptedGenerator(answers)
    return Answerer(gen, FixedRetriever(KB), rb, AnswererConfig(lm_extraction=False, **config)), gen


def test_the_correction_is_followed_by_the_statement_that_answers_the_rest(rb):
    a, gen = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask(ASK)
    assert len(gen.calls) == 1 and r.status == "verified", r.reason
    n = r.attempts[-1].quoted
    assert r.answer == ("That is not right: the rated payload for AX-200 is 200 kg [1]. The AX-200 battery pack must "
                        f"be replaced every 36 months of operation. [{n}]")
    assert [c.doc_id for c in r.citations] == ["ax200.md", "battery.md"]
    assert [c["stated"] for c in r.premise_corrections] == ["300 kg"]
    assert r.reason.startswith("the model said the documents do not say; the rules disprove the question's premise "
                               f"and the answer says so first; for what the question asks besides it, quotes source [{n}]")
    assert r.attempts[-1].usage["completion_tokens"] == 0


def test_without_quotes_or_a_rest_the_correction_alone_answers(rb):
    a, _ = make(rb, [ABSTAIN_SENTINEL], quote_answers=False)
    r = a.ask(ASK)
    assert r.status == "verified" and r.answer == "That is not right: the rated payload for AX-200 is 200 kg [1]."
    a, _ = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("Why does the AX-200 have a rated payload of 300 kg?")
    assert r.answer == "That is not right: the rated payload for AX-200 is 200 kg [1]." and r.attempts[-1].quoted is None


def test_a_statement_that_only_repeats_the_correction_is_not_quoted(rb):
    a, _ = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("The AX-200 has a rated payload of 300 kg; how much can the AX-200 carry at most?")
    assert r.answer == "That is not right: the rated payload for AX-200 is 200 kg [1]." and r.attempts[-1].quoted is None
