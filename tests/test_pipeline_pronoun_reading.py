"""A subject pronoun read as the person named before it: the rule files' patterns and the entity-pair reader read
the sentence with that name in its place, keep only what reads through it, and map the span back onto the answer."""
from __future__ import annotations

import pytest

from pipeline.readers.pronouns import pronoun_claims
from symbolic import Claim, Fact
from pipeline_fakes import rulebase_of

RULES = """
type person "person"
entity person liu "Liu Mingxuan" aka "刘明轩"
entity person he_jing "He Jing" aka "何静"
entity person dana "Dana Whitcombe"
type grade "grade"
entity grade cr6 "CR6" aka "CR6级"
type site "site"
entity site chengdu "Chengdu depot" aka "成都车场"
type title "title"
entity title gm "General Manager"
relation reports_to(p: person, q: person) "reports to" unique
relation person_grade(p: person, g: grade) "grade" unique
relation person_site(p: person, s: site) "location" unique
pattern EN_REPORTS: "{p:person} reports to {q:person}" -> reports_to(p, q)
pattern EN_GRADE: "{person} is grade {grade}" -> person_grade(person, grade)
pattern ZH_SITE: re"{person}\\s*是\\s*{site}" -> person_site(person, site)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, answer, taken=()):
    return [(str(c.fact), c.text, c.extractor) for c in pronoun_claims(answer, [], rb, list(taken))]


def test_a_pronoun_is_read_as_the_nearest_person_named_before_it(rb):
    answer = "Liu Mingxuan is General Manager; he reports to Dana Whitcombe [1]."
    assert _read(rb, answer) == [("reports_to(liu, dana)", "he reports to Dana Whitcombe", "pronoun")]
    answer = "何静的上级是刘明轩，他是成都车场的员工。"
    assert _read(rb, answer) == [("person_site(liu, chengdu)", "他是成都车场", "pronoun")]
    # the pronoun opens the next sentence: the previous sentence's subject
    answer = "Dana Whitcombe manages Liu Mingxuan. She is grade CR6."
    assert _read(rb, answer) == [("person_grade(dana, cr6)", "She is grade CR6", "pronoun")]


def test_no_person_before_no_pattern_through_the_pronoun_or_a_claim_already_read(rb):
    assert _read(rb, "He reports to Dana Whitcombe.") == []                      # nobody named before
    assert _read(rb, "Liu Mingxuan is General Manager; he is busy.") == []         # no pattern reads it
    assert _read(rb, "其他员工是成都车场的。") == []                                  # 其他 is no pronoun
    taken = [Claim(Fact("reports_to", ("liu", "dana")), "x", 0, 1)]
    assert _read(rb, "Liu Mingxuan is General Manager; he reports to Dana Whitcombe.", taken) == []


def test_an_entity_pair_is_read_through_the_pronoun_and_only_the_pair_it_adds(rb):
    # no pattern reads a site in English: the entity-pair reader places him ("is … at the Chengdu depot")
    answer = "Dana Whitcombe manages Liu Mingxuan; he is grade CR6 at the Chengdu depot."
    got = _read(rb, answer)
    assert ("person_site(liu, chengdu)", answer, "pronoun") in got
    assert ("person_grade(liu, cr6)", "he is grade CR6", "pronoun") in got
    # a pair the sentence states without the pronoun is the entity-pair reader's, not read through the name
    assert _read(rb, "Liu Mingxuan is grade CR6 at the Chengdu depot; he is busy.") == []
