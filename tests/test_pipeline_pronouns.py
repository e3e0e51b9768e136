"""A pronoun in a question's asking sentence stands for the entity of its type named last before it: the
others of that type leave the focus. Nothing changes when the asking sentence names an entity of the type,
when two types could be meant, or for plural pronouns and 其他 ("other")."""
from __future__ import annotations

import pytest

from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of

RULES = """
type person "person"
entity person reid "Dr Callum Reid" aka "Callum Reid", "瑞德"
entity person sinclair "Dr Morag Sinclair" aka "Morag Sinclair", "辛克莱"
type site "campus"
entity site glasgow "Glasgow"
entity site suzhou "Suzhou"
relation person_grade(p: person, g: text) "grade" aka "职级"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _people(rb, question: str) -> list[str]:
    return [x.entity_id for x in parse_question(question, rb).entities]


def test_the_pronoun_is_the_entity_named_last_before_it(rb):
    assert _people(rb, "While Dr Morag Sinclair is on leave, Dr Callum Reid deputises for her. What is his grade?") \
        == ["reid"]
    assert _people(rb, "Dr Callum Reid is away, so Dr Morag Sinclair signs. What is her grade?") == ["sinclair"]
    assert _people(rb, "辛克莱休假期间由瑞德代理。他的职级是什么？") == ["reid"]


def test_nothing_is_resolved_without_a_pronoun_a_choice_or_a_single_type(rb):
    # the asking sentence names its person
    assert _people(rb, "Dr Morag Sinclair deputises for Dr Callum Reid. What is Callum Reid's grade?") == \
        ["sinclair", "reid", "reid"]
    # a plural, and 其他 ("other"), stand for nobody in particular
    assert _people(rb, "Dr Morag Sinclair and Dr Callum Reid work here. What are their grades?") == ["sinclair", "reid"]
    assert _people(rb, "辛克莱和瑞德都在这里。其他人的职级呢？") == ["sinclair", "reid"]
    # one sentence: nothing before the asking sentence to resolve to
    assert _people(rb, "Dr Morag Sinclair or Dr Callum Reid: what is his grade?") == ["sinclair", "reid"]
    # two persons and two campuses before the pronoun: which type "it" or "his" means is not known
    assert _people(rb, "Dr Morag Sinclair works at Glasgow and Dr Callum Reid at Suzhou. What is his grade?") == \
        ["sinclair", "glasgow", "reid", "suzhou"]
