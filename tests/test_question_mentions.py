"""A shorter name of an entity that the question qualifies with a word of its own names another kind (blind/07
un-03: "incoming loans" answered with the fee of outgoing loans, the only loan scope with a fee)."""
from __future__ import annotations

import pytest
from pipeline_fakes import rulebase_of

from pipeline.question.focus import parse_question

RULES = """
type scope "loan scope"
entity scope outgoing "outgoing loans" aka "loans", "loan"
entity scope domestic "domestic loans in China"
type title "title"
entity title depot_manager "Depot Manager" aka "manager"
relation admin_fee(s: scope, x: money) "administration fee per object"
relation title_limit(t: title, x: money) "approval limit"
fact admin_fee(outgoing, 450 GBP)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _parse(rb, q):
    implied = {("admin_fee", 0): "outgoing"}
    focus = parse_question(q, rb, implied=implied)
    return [x.entity_id for x in focus.entities], [(g.relation, g.args) for g in focus.goals], focus.other_kinds


def test_a_name_qualified_otherwise_names_another_kind_and_nothing_stands_in(rb):
    entities, goals, other = _parse(rb, "What is the loan administration fee per object for incoming loans?")
    assert entities == [] and goals == [] and other == {"scope"}
    entities, goals, _ = _parse(rb, "What approval limit does my line manager have?")
    assert "depot_manager" not in entities and goals == []


def test_the_entitys_own_words_or_no_qualifier_keep_it(rb):
    assert _parse(rb, "What is the administration fee per object for outgoing loans?")[1] == [("admin_fee", ("outgoing",))]
    assert _parse(rb, "What is the administration fee per object for loans?")[1] == [("admin_fee", ("outgoing",))]
    # the qualifier is the entity's own word said apart from the mention
    assert _parse(rb, "For outgoing ones, what is the administration fee per object on new loans?")[1] == \
        [("admin_fee", ("outgoing",))]
    assert _parse(rb, "What approval limit does the Depot Manager have?")[1] == [("title_limit", ("depot_manager",))]
    # a question naming no loan at all still takes the implied one
    assert _parse(rb, "What is the administration fee per object?")[1] == [("admin_fee", ("outgoing",))]
    # Chinese is not read for qualifiers
    assert _parse(rb, "出借 loans 的 administration fee per object 是多少？")[2] == frozenset()


def test_a_mention_that_qualifies_a_noun_after_it_is_kept(rb):
    # blind/07 num-01: "the current loans policy" is a policy, not a current kind of loan
    assert _parse(rb, "Under the current loans policy, what is the administration fee per object?")[1] == \
        [("admin_fee", ("outgoing",))]
