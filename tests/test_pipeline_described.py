"""An entity the question describes by a measured value is the one entity the facts give that value: the
focus then has goals about it; a value two entities share, a kind of value that describes the asker's case,
or a type the question already names describes nothing."""
from __future__ import annotations

import pytest

from pipeline.described import described_entities, with_described
from pipeline.question import parse_question
from pipeline_fakes import rulebase_of
from symbolic import Fact, Provenance
from symbolic.values import parse_value

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
entity product mx_900 "MX-900"
relation payload(p: product, m: quantity[kg]) "rated payload"
relation reach(p: product, m: quantity[mm]) "reach"
relation battery_warranty(p: product, d: duration[month]) "battery warranty"
fact payload(ax_200, 200 kg)
fact payload(lx_500, 500 kg)
fact payload(mx_900, 500 kg)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _doc_fact(relation, *args):
    return Fact(relation, args, 1.0, Provenance("document", doc_id="d.md", start=0, end=1))


def test_the_one_entity_with_the_stated_value_is_described(rb):
    q = "How long is the battery warranty on the robot that can carry 200 kg?"
    focus = parse_question(q, rb)
    assert focus.goals == []
    [mention] = described_entities(focus, rb, rb.facts)
    assert (mention.entity_id, mention.text, q[mention.start:mention.end]) == ("ax_200", "200 kg", "200 kg")
    focus = with_described(focus, rb, rb.facts)
    assert [(g.relation, g.args) for g in focus.goals] == [("battery_warranty", ("ax_200",))]


def test_a_documents_fact_describes_too_and_units_convert(rb):
    facts = [*rb.facts, _doc_fact("reach", "lx_500", parse_value("1.2 m"))]
    focus = parse_question("What is the battery warranty of the robot with a reach of 1200 mm?", rb)
    assert [x.entity_id for x in described_entities(focus, rb, facts)] == ["lx_500"]


def test_nothing_is_described_by_a_shared_value_a_duration_or_beside_a_named_entity(rb):
    # 500 kg: two robots
    assert described_entities(parse_question("Battery warranty of the robot that carries 500 kg?", rb), rb,
                              rb.facts) == []
    # a duration describes the asker's case, not a thing
    facts = [*rb.facts, _doc_fact("battery_warranty", "lx_500", parse_value("18 months"))]
    assert described_entities(parse_question("Which robot has an 18 month battery warranty?", rb), rb, facts) == []
    # a product is named: the value is about it
    focus = parse_question("Can the LX-500 carry 200 kg?", rb)
    assert described_entities(focus, rb, rb.facts) == []
    assert with_described(focus, rb, rb.facts) is focus
