"""A sentence claiming two links of a rule's chain through a unique relation claims the third; not across
sentences, a second link two chains could give only where the sentence names it; a sentence stating every premise of
a goal states its conclusion; never a claim already read."""
from __future__ import annotations

import pytest

from pipeline.readers.chains import chain_claims, chains
from pipeline.readers.focus import sentence_claim
from pipeline_fakes import rulebase_of
from symbolic.values import Money

RULES = """
type city "city"
entity city paris "Paris"
type tier "tier"
entity tier tier_1 "Tier 1"
relation city_tier(c: city, t: tier) "city tier" unique
relation tier_limit(t: tier, x: money[EUR]) "hotel limit per night"
relation city_limit(c: city, x: money[EUR]) "hotel limit in a city"
relation city_region(c: city, t: tier) "region"
goal CITY "a city's limit is its tier's":
    city_limit(?c, ?x) if city_tier(?c, ?t) and tier_limit(?t, ?x)
goal REGION "not unique: no chain":
    city_limit(?c, ?x) if city_region(?c, ?t) and tier_limit(?t, ?x)
"""
TEXT = "Paris is a Tier 1 city with a limit of EUR 180 per night. Berlin is elsewhere."


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _claim(relation, args, start=0, end=57):
    return sentence_claim(relation, tuple(args), TEXT, start, end, [], "vocabulary", 0.9)


def test_only_two_link_chains_through_a_unique_relation(rb):
    assert chains(rb) == [("city_limit", "city_tier", "tier_limit")]


def test_the_third_link_either_way(rb):
    eur = Money(180, "EUR")
    tier = _claim("city_tier", ["paris", "tier_1"])
    assert [str(c.fact) for c in chain_claims(TEXT, [tier, _claim("tier_limit", ["tier_1", eur])], rb)] == [
        "city_limit(paris, 180 EUR)"]
    found = chain_claims(TEXT, [tier, _claim("city_limit", ["paris", eur])], rb)
    assert [(str(c.fact), c.extractor, c.text) for c in found] == [("tier_limit(tier_1, 180 EUR)", "chain", TEXT[:57])]
    # all three said: nothing to add
    assert chain_claims(TEXT, [tier, _claim("city_limit", ["paris", eur]), _claim("tier_limit", ["tier_1", eur])], rb) == []


def test_not_across_sentences_nor_another_subject(rb):
    eur = Money(180, "EUR")
    tier = _claim("city_tier", ["paris", "tier_1"])
    assert chain_claims(TEXT, [tier, _claim("tier_limit", ["tier_1", eur], 58, len(TEXT))], rb) == []
    assert chain_claims(TEXT, [tier, _claim("city_limit", ["berlin", eur])], rb) == []


def test_of_two_chains_concluding_the_head_the_second_link_the_sentence_names(tmp_path):
    rb = rulebase_of(RULES + 'relation tier_cap(t: tier, x: money[EUR]) "cap"\n'
                     'goal CAP "or its cap":\n    city_limit(?c, ?x) if city_tier(?c, ?t) and tier_cap(?t, ?x)\n', tmp_path)
    eur = Money(180, "EUR")
    tier = _claim("city_tier", ["paris", "tier_1"])
    # "a limit of EUR 180 per night" names the tier's limit per night, not its cap
    assert [str(c.fact) for c in chain_claims(TEXT, [tier, _claim("city_limit", ["paris", eur])], rb)] == [
        "tier_limit(tier_1, 180 EUR)"]
    assert [str(c.fact) for c in chain_claims(TEXT, [tier, _claim("tier_cap", ["tier_1", eur])], rb)] == [
        "city_limit(paris, 180 EUR)"]
    # a sentence naming neither second link, or both alike, does not say which holds
    plain = "Paris is in Tier 1 at EUR 180."
    said = [sentence_claim("city_tier", ("paris", "tier_1"), plain, 0, len(plain), [], "vocabulary", 0.9),
            sentence_claim("city_limit", ("paris", eur), plain, 0, len(plain), [], "vocabulary", 0.9)]
    assert chain_claims(plain, said, rb) == []
    (tmp_path / "twin").mkdir()
    twin = rulebase_of(RULES + 'relation tier_cap(t: tier, x: money[EUR]) "tier limit"\n'
                       'goal CAP "or its cap":\n    city_limit(?c, ?x) if city_tier(?c, ?t) and tier_cap(?t, ?x)\n',
                       tmp_path / "twin")
    assert chain_claims(TEXT, [tier, _claim("city_limit", ["paris", eur])], twin) == []


GOAL_RULES = """
entity person chen "Chen Hao"
entity person wang "Wang Yu"
entity grade hg7 "HG7"
entity grade hg8 "HG8"
entity campus suzhou "Suzhou"
relation grade_of(p: person, g: grade) "grade" unique
relation campus_of(p: person, c: campus) "campus" unique
relation grade_limit(g: grade, c: campus, x: money[CNY]) "approval limit of a grade"
relation person_limit(p: person, x: money[CNY]) "a person's approval limit"
goal LIMIT "a person's limit is their grade's at their campus":
    person_limit(?p, ?x) if grade_of(?p, ?g) and campus_of(?p, ?c) and grade_limit(?g, ?c, ?x)
"""
GOAL_TEXT = "The approval limit for Chen Hao is CNY 108,000 (grade: HG8; campus: Suzhou) [1]. Wang Yu is HG7."


def test_a_goal_of_three_links_gives_the_value_premise_from_its_conclusion_and_the_others(tmp_path):
    from pipeline.readers.chains import goal_premise_claims
    rb = rulebase_of(GOAL_RULES, tmp_path)
    cny = Money(108000, "CNY")

    def claim(relation, args, start=0, end=80):
        return sentence_claim(relation, tuple(args), GOAL_TEXT, start, end, [], "label", 0.9)
    said = [claim("person_limit", ["chen", cny]), claim("grade_of", ["chen", "hg8"]), claim("campus_of", ["chen", "suzhou"])]
    found = goal_premise_claims(GOAL_TEXT, said, rb)
    assert [(str(c.fact), c.extractor) for c in found] == [("grade_limit(hg8, suzhou, 108000 CNY)", "chain")]
    # a link left unsaid, or said in another sentence, or of another person: no claim
    assert goal_premise_claims(GOAL_TEXT, said[:2], rb) == []
    assert goal_premise_claims(GOAL_TEXT, [*said[:2], claim("campus_of", ["chen", "suzhou"], 82, 99)], rb) == []
    assert goal_premise_claims(GOAL_TEXT, [*said[:2], claim("campus_of", ["wang", "suzhou"])], rb) == []
    # two grades said for the one person: which one the limit is given for is not known
    assert goal_premise_claims(GOAL_TEXT, [*said, claim("grade_of", ["chen", "hg7"])], rb) == []


def test_a_sentence_stating_every_premise_of_a_goal_states_its_conclusion(tmp_path):
    from pipeline.readers.chains import goal_conclusion_claims
    rb = rulebase_of(GOAL_RULES, tmp_path)
    text = "Chen Hao is grade HG8, whose limit at Suzhou is CNY 108,000 [1]. Wang Yu is HG7."
    cny = Money(108000, "CNY")

    def claim(relation, args, start=0, end=64, cited=("1",)):
        return sentence_claim(relation, tuple(args), text, start, end, list(cited), "pattern", 0.9)
    said = [claim("grade_of", ["chen", "hg8"]), claim("campus_of", ["chen", "suzhou"]),
            claim("grade_limit", ["hg8", "suzhou", cny])]
    found = goal_conclusion_claims(text, said, rb)
    assert [(str(c.fact), c.extractor, c.text, c.cited) for c in found] == [
        ("person_limit(chen, 108000 CNY)", "chain", text[:64], ["1"])]
    # a premise unsaid, said in another sentence, or of another grade: no conclusion
    assert goal_conclusion_claims(text, said[:2], rb) == []
    assert goal_conclusion_claims(text, [*said[:2], claim("grade_limit", ["hg8", "suzhou", cny], 66, 83)], rb) == []
    assert goal_conclusion_claims(text, [*said[:2], claim("grade_limit", ["hg7", "suzhou", cny])], rb) == []
    # two grades said for the one person: which limit is theirs is not known
    assert goal_conclusion_claims(text, [*said, claim("grade_of", ["chen", "hg7"])], rb) == []
    # the conclusion said already, with this value or another: nothing added
    assert goal_conclusion_claims(text, [*said, claim("person_limit", ["chen", cny])], rb) == []
    assert goal_conclusion_claims(text, [*said, claim("person_limit", ["chen", Money(9, "CNY")])], rb) == []
