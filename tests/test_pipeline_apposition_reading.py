"""Entity pairs whose subject stands in an earlier clause: an appositive or a subjectless clause read with the
sentence's one subject before it; never across a new statement, another object or a negation."""
from __future__ import annotations

import pytest

from pipeline.readers.apposition import apposition_pair_claims
from symbolic import Claim, Fact
from pipeline_fakes import rulebase_of

RULES = """
type city "city"
entity city berlin "Berlin"
entity city paris "Paris"
entity city hangzhou "杭州"
type tier "city tier"
entity tier tier_1 "Tier 1"
entity tier tier_2 "Tier 2"
entity tier cn_tier_2 "二类城市"
type person "person"
entity person chen_wei "陈伟" aka "Chen Wei"
entity person ann "Ann Lee"
type grade "grade"
entity grade k4 "K4"
type hub "hub"
entity hub ningbo "Ningbo hub"
relation city_tier(c: city, t: tier) "city tier" unique
relation grade_of(p: person, g: grade) "grade" aka "职级" unique
relation works_at(p: person, h: hub) "works at"
type title "title"
entity title supervisor "workshop supervisor"
relation person_title(p: person, t: title) "title" unique
relation manages(p: person, h: hub) "manages"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _pairs(rb, answer, taken=()):
    return [str(c.fact) for c in apposition_pair_claims(answer, [], rb, list(taken))]


def test_a_subjectless_clause_after_a_comma_takes_the_sentences_subject(rb):
    assert _pairs(rb, "杭州是省会城市，属于二类城市，住宿标准为每晚 500 元。") == ["city_tier(hangzhou, cn_tier_2)"]
    assert _pairs(rb, "Berlin, a Tier 2 city, has a lower limit.") == ["city_tier(berlin, tier_2)"]
    assert _pairs(rb, "Berlin, which is a Tier 2 city, has a lower limit.") == ["city_tier(berlin, tier_2)"]


def test_a_name_in_brackets_and_the_relations_name_before_the_object(rb):
    assert _pairs(rb, "陈伟（Chen Wei），职级 K4。") == ["grade_of(chen_wei, k4)"]
    # two relations link a person and a hub: only the named one is read
    assert _pairs(rb, "Ann Lee joined in 2020, and manages the Ningbo hub.") == ["manages(ann, ningbo)"]


def test_nothing_across_a_new_statement_another_subject_or_object_or_a_negation(rb):
    assert _pairs(rb, "Berlin is in Germany; a Tier 2 city is cheaper.") == []        # semicolon
    assert _pairs(rb, "Berlin is large, but a Tier 2 city.") == []                    # "but"
    assert _pairs(rb, "Berlin and Paris are large, a Tier 1 city each.") == []        # two subjects
    assert _pairs(rb, "Berlin is Tier 1 in one list, a Tier 2 city in another.") == []  # an object between
    assert _pairs(rb, "Berlin is large, not a Tier 1 city.") == []                    # negated
    assert _pairs(rb, "Berlin is large, Tier 1 cities are larger.") == []             # no copula, no name
    assert _pairs(rb, "Ann Lee joined in 2020, the Ningbo hub opened later.") == []   # neither relation named


def test_a_pair_already_read_is_not_read_again(rb):
    taken = [Claim(Fact("city_tier", ("berlin", "tier_2")), "Berlin is a Tier 2 city", 0, 23)]
    assert _pairs(rb, "Berlin, a Tier 2 city, has a lower limit.", taken) == []


def test_the_appositive_of_the_name_it_follows_among_several(rb):
    # two people before the appositive: it describes the one it stands right after
    assert _pairs(rb, "Chen Wei reports to Ann Lee, the workshop supervisor.") == ["person_title(ann, supervisor)"]
    assert _pairs(rb, "Chen Wei reports to Ann Lee today, the workshop supervisor.") == []    # not right after
    # another entity's name before the object qualifies it: "a K4 workshop supervisor"
    assert sorted(_pairs(rb, "Ann Lee, a K4 workshop supervisor, joined in 2020.")) == [
        "grade_of(ann, k4)", "person_title(ann, supervisor)"]
