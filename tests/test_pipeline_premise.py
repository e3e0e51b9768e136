"""Premises a question states that the rules disprove: read only where the question asserts them, proved
wrong against the documents' facts, and corrected first in the answer (by the draft or by the proof)."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.readers.premises import disproved_premises, premise_gap, stated_premises
from pipeline.generate.prompts import ABSTAIN_SENTINEL
from pipeline.question.focus import parse_question
from symbolic.values import Quantity
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
type policy "policy"
entity policy travel_policy "travel policy"
relation payload(p: product, m: quantity[kg]) "rated payload" aka "额定载重"
relation min_flight_hours(p: policy, h: duration[hour]) "business class minimum flight time"
pattern P_PAYLOAD: "{product} ... payload (of|is) {m:quantity}" -> payload(product, m)
pattern P_PAYLOAD_ZH: "{product}的额定载重(为|是){m:quantity}" -> payload(product, m)
pattern P_FLIGHT: "business class minimum flight time (of|is) {h:duration}" -> min_flight_hours(travel_policy, h)
"""
AX = FakePassage("ax200.md", "The AX-200 has a rated payload of 200 kg.", 0.5, chunk_id="ax")
LX = FakePassage("lx500.md", "The LX-500 has a rated payload of 500 kg.", 0.4, start=10, chunk_id="lx")
FLIGHT = FakePassage("travel.md", "The business class minimum flight time is 6 hours.", 0.3, chunk_id="fl")
KB = [AX, LX, FLIGHT]


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def premises(rb, question):
    return [(c.fact.relation, c.fact.args) for c in stated_premises(question, parse_question(question, rb), rb)]


def corrections(rb, question):
    facts = KBFactCache().get(FixedRetriever(KB), rb).facts
    return disproved_premises(parse_question(question, rb), rb, facts)


def test_premises_are_read_where_the_question_asserts_them(rb):
    assert premises(rb, "Why does the AX-200 have a rated payload of 300 kg?") == \
        [("payload", ("ax_200", Quantity(300.0, "kg")))]
    assert premises(rb, "The AX-200 has a rated payload of 300 kg; what does the LX-500 carry?") == \
        [("payload", ("ax_200", Quantity(300.0, "kg")))]
    # a yes/no question tests its values; the asker's own case and a supposition assert nothing
    assert premises(rb, "Does the AX-200 have a rated payload of 300 kg?") == []
    assert premises(rb, "The AX-200 has a rated payload of 300 kg. Is that enough?") == []
    assert premises(rb, "If the AX-200 has a rated payload of 300 kg, which robot carries more?") == []
    assert premises(rb, "My AX-200 has a rated payload of 300 kg; why is it slow?") == []
    assert premises(rb, "AX-200 的额定载重是 300 公斤吗？") == []


def test_a_premise_the_documents_contradict_is_disproved_with_its_proof(rb):
    [c] = corrections(rb, "Why does the AX-200 have a rated payload of 300 kg?")
    assert c.stated == Quantity(300.0, "kg") and c.proof.value == Quantity(200.0, "kg") and c.proof.cf == 1.0
    assert [f.provenance.doc_id for f in c.proof.documents] == ["ax200.md"]
    assert c.to_dict()["stated"] == "300 kg" and c.to_dict()["proved"]["value"] == "200 kg"
    # a premise the documents confirm, or one they say nothing about, needs no correction
    assert corrections(rb, "Why does the AX-200 have a rated payload of 200 kg?") == []
    assert corrections(rb, "Why is the business class minimum flight time 7 hours?")[0].proof.value.value == 6.0
    assert corrections(rb, "What is the weather like?") == []


def test_the_premise_gap_names_the_right_value(rb):
    [c] = corrections(rb, "Why does the AX-200 have a rated payload of 300 kg?")
    gap = premise_gap("The AX-200 is a robot [1].", [], [c], rb)
    assert gap == ("the question's premise is wrong (rated payload is 200 kg, not 300 kg), "
                   "and the answer does not say so")
    assert premise_gap("No: it carries 200 kg [1].", [Quantity(200.0, "kg")], [c], rb) is None
    # the right value given as the reason for the wrong premise takes the premise as true
    gap = premise_gap("[1] Because the AX-200 carries 200 kg.", [Quantity(200.0, "kg")], [c], rb)
    assert gap == ("the question's premise is wrong (rated payload is 200 kg, not 300 kg), and the answer gives "
                   "the right value as the reason for it instead of saying so")
    assert premise_gap("The AX-200 carries 200 kg because of its motor [1].", [Quantity(200.0, "kg")], [c], rb) is None


def make(rb, answers):
    gen = ScriptedGenerator(answers)
    return Answerer(gen, FixedRetriever(KB), rb, AnswererConfig()), gen


def test_a_draft_that_ignores_the_premise_is_replaced_by_the_correction(rb):
    for draft in ["The AX-200 is a warehouse robot [1].", ABSTAIN_SENTINEL]:
        a, gen = make(rb, [draft])
        r = a.ask("Why does the AX-200 have a rated payload of 300 kg while the LX-500 has a payload of 200 kg?")
        assert len(gen.calls) == 1 and r.status == "verified", r.reason
        assert r.answer == ("That is not right: the rated payload for AX-200 is 200 kg [1]. "
                            "The rated payload for LX-500 is 500 kg [2].")
        assert [c.doc_id for c in r.citations] == ["ax200.md", "lx500.md"]
        assert [(c.relation, c.verdict, c.extractor) for c in r.claims] == \
            [("payload", "supported", "proof")] * 2
        assert r.answer[r.claims[0].start:r.claims[0].end] == "the rated payload for AX-200 is 200 kg [1]"
        assert "the question's premise is wrong: payload is 200 kg, not 300 kg" in r.reason
        assert [c["stated"] for c in r.premise_corrections] == ["300 kg", "200 kg"]
        # the sources stating the right values lead the prompt
        assert gen.calls[0][0]["content"].index("ax200.md") < gen.calls[0][0]["content"].index("travel.md")


def test_a_draft_that_corrects_the_premise_is_kept(rb):
    right = "It does not: the AX-200 has a rated payload of 200 kg [1]."
    a, _ = make(rb, [right])
    r = a.ask("Why does the AX-200 have a rated payload of 300 kg?")
    assert r.status == "verified" and r.answer == right


def test_a_draft_giving_the_right_value_as_the_reason_is_replaced_by_the_correction(rb):
    a, gen = make(rb, ["因为 AX-200 的额定载重是 200 公斤 [1]。"])
    r = a.ask("为什么 AX-200 的额定载重是 300 公斤？")
    assert len(gen.calls) == 1 and r.status == "verified", r.reason
    assert r.answer == "这个前提不对：AX-200的额定载重为200 公斤 [1]。"
    assert "gives the right value as the reason" in r.attempts[0].gaps[0]


def test_a_chinese_question_gets_a_chinese_correction(rb):
    a, _ = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("为什么 AX-200 的额定载重是 300 公斤？")
    assert r.status == "verified", r.reason
    assert r.answer == "这个前提不对：AX-200的额定载重为200 公斤 [1]。"


def test_the_question_is_answered_besides_its_corrected_premise(rb):
    # the premise's goal is not what is asked, and its value is not one the question computes with
    a, gen = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("The AX-200 has a rated payload of 300 kg; what is the rated payload of the LX-500?")
    assert len(gen.calls) == 1 and r.status == "verified", r.reason
    assert r.answer == ("That is not right: the rated payload for AX-200 is 200 kg [2]. "
                        "The rated payload for LX-500 is 500 kg [1].")
    assert r.proof["args"] == ["lx_500"] and [c["stated"] for c in r.premise_corrections] == ["300 kg"]
    a, _ = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("Since the business class minimum flight time is 9 hours, what is the rated payload of the AX-200?")
    assert r.status == "verified" and r.answer == (
        "That is not right: the business class minimum flight time for travel policy is 6 hours [2]. "
        "The rated payload for AX-200 is 200 kg [1]."), r.reason


TRIP_RULES = r"""
type plan "plan"
entity plan wayfarer "Wayfarer"
relation max_trip_length(p: plan, d: duration[day]) "maximum trip length"
pattern PT: "{p:plan} ... {d:duration} trip" -> max_trip_length(p, d)
pattern PM: "maximum trip length (of|for) {p:plan} is {d:duration}" -> max_trip_length(p, d)
fact max_trip_length(wayfarer, "45 days")
"""


def test_a_case_within_a_limit_is_no_wrong_premise(tmp_path):
    # blind/02 num-01, num-03: "a 10-day trip" was corrected by the 45-day maximum trip length
    rb = rulebase_of(TRIP_RULES, tmp_path, "t.rules")
    case = "How much does Wayfarer cost for a 10 day trip in Europe?"
    assert premises(rb, case) == [("max_trip_length", ("wayfarer", Quantity(10, "day")))]
    assert corrections(rb, case) == []
    # past the limit, or a statement of the limit itself, is still corrected
    assert [str(c.proof.value) for c in corrections(rb, "How much does Wayfarer cost for a 60 day trip?")] == ["45 days"]
    wrong_limit = "Why is the maximum trip length for Wayfarer is 30 days?"
    assert [str(c.proof.value) for c in corrections(rb, wrong_limit)] == ["45 days"]
