"""'The <relation's name> for <subject> is <value>' claims: the name is the rule author's, the subject places
the other arguments (a count said with its parameter's name included), the value right after the verb ends
the claim; no claim when the subject names something no parameter takes, an argument cannot be placed, or
the value is negated; a pattern's looser reading of the same value gives way."""
from __future__ import annotations

import pytest

from pipeline.readers.registry import read_answer
from pipeline.readers.phrases import phrase_claims
from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of

RULES = """
type city "city" aka "城市"
entity city paris "Paris" aka "巴黎"
entity city berlin "Berlin" aka "柏林"
type tier "city tier"
entity tier tier_1 "Tier 1" aka "一类城市"
entity tier tier_2 "Tier 2"
type instrument "instrument"
entity instrument xr_40 "Aldera XR-40" aka "XR-40"
type policy "travel policy"
entity policy travel_policy "the travel policy"
relation city_tier(c: city, t: tier) "city tier" aka "城市分类"
relation hotel_limit_for_city(c: city, x: money[EUR]) "hotel limit in a city" aka "城市住宿标准"
relation hotel_stay_limit(c: city, nights: number, x: money[EUR]) "hotel stay cost" aka "住宿费"
relation sample_capacity(i: instrument, n: number) "autosampler or rotor capacity"
relation advance_booking(p: policy, d: duration) "book ahead by"
relation per_diem(c: city, x: money[EUR]) "per diem"
relation per_diem_total(c: city, days: number, x: money[EUR]) "per diem for several full days"
pattern PER_DIEM: re"per\\s+diem[^.]{0,60}?{city}[^.]{0,40}?{x:money}" -> per_diem(city, x)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _phrased(rb, question: str, answer: str) -> list[str]:
    return [str(c.fact) for c in phrase_claims(answer, [], parse_question(question, rb), rb)]


def test_the_engines_composed_sentences_are_read_back(rb):
    assert _phrased(rb, "What may 4 nights in Paris cost?",
                    "The hotel stay cost for Paris, 4 nights is EUR 720 (hotel limit in a city: EUR 180) [1].") == [
        "hotel_stay_limit(paris, 4, 720 EUR)"]
    # a name with "or" in it is one name, not two clauses
    assert _phrased(rb, "How many samples does the XR-40 hold?",
                    "That is not right: the autosampler or rotor capacity for Aldera XR-40 is 45 [1].") == [
        "sample_capacity(xr_40, 45)"]
    assert _phrased(rb, "Which tier is Berlin?", "The city tier for Berlin is Tier 2.") == ["city_tier(berlin, tier_2)"]
    assert _phrased(rb, "柏林住 3 晚最多多少？", "柏林，3 晚的住宿费为 EUR 420 [1]。") == [
        "hotel_stay_limit(berlin, 3, 420 EUR)"]
    # the verbal form, "<subject>: <name> <value>", with the type's only entity as subject
    assert _phrased(rb, "How early must I book?", "The travel policy: book ahead by 14 days.") == [
        "advance_booking(travel_policy, 14 days)"]


def test_an_argument_the_subject_leaves_out_comes_from_the_question_or_the_sentence(rb):
    assert _phrased(rb, "What is the hotel limit in Paris?", "The hotel limit in a city is EUR 180.") == [
        "hotel_limit_for_city(paris, 180 EUR)"]
    # the count from the question when the subject does not say it
    assert _phrased(rb, "What may 4 nights in Paris cost?", "The hotel stay cost for Paris is EUR 720.") == [
        "hotel_stay_limit(paris, 4, 720 EUR)"]


def test_no_claim_when_the_subject_does_not_fit_or_the_value_is_negated(rb):
    # Tier 1 is no parameter of the city's limit: the sentence says something else
    assert _phrased(rb, "What is the hotel limit?", "The hotel limit in a city for Paris and Tier 1 is EUR 180.") == []
    # two cities for one place
    assert _phrased(rb, "What is the hotel limit?", "The hotel limit in a city for Paris or Berlin is EUR 180.") == []
    assert _phrased(rb, "What is the hotel limit in Paris?", "The hotel limit in a city for Paris is not EUR 180.") == []
    # a value of the wrong kind after the verb
    assert _phrased(rb, "What is the hotel limit in Paris?", "The hotel limit in a city for Paris is 3 days.") == []
    # no city anywhere: the argument cannot be placed
    assert _phrased(rb, "What is the hotel limit?", "The hotel limit in a city is EUR 180.") == []
    # a name that is no relation's
    assert _phrased(rb, "What is the cost in Paris?", "The usual cost for Paris is EUR 180.") == []


def test_a_patterns_looser_reading_of_the_same_value_gives_way(rb):
    q = "What is the per diem in Paris for 4 days?"
    answer = "The per diem for several full days for Paris, 4 days is EUR 216."
    focus = parse_question(q, rb)
    claims, mentions = read_answer(answer, [], [{"role": "user", "content": q}], focus, rb)
    assert [(c.extractor, str(c.fact)) for c in claims] == [("phrase", "per_diem_total(paris, 4, 216 EUR)")]
    assert all(m.text != "EUR 216" for m in mentions)
    # without the phrase, the pattern's reading stands
    answer = "The per diem in Paris is EUR 216."
    claims, _ = read_answer(answer, [], [{"role": "user", "content": q}], focus, rb)
    assert [(c.extractor, str(c.fact)) for c in claims] == [("pattern", "per_diem(paris, 216 EUR)")]


def test_a_patterns_reading_onwards_from_the_value_stands_beside_the_phrase(tmp_path):
    # shipped sup-02 (135M): "…for a full travel day is EUR 52 for the day of arrival" gives EUR 52 to both days,
    # and the arrival day's reading must reach the verifier
    rb = rulebase_of("""type day "day"
entity day full_day "full travel day"
entity day arrival_day "day of arrival"
relation per_diem(d: day, x: money[EUR]) "per diem"
pattern PD: "{x:money} for the {day}" -> per_diem(day, x)
""", tmp_path)
    q = "What is the per diem for a full travel day?"
    focus = parse_question(q, rb)
    answer = "The per diem for full travel day is EUR 52 for the day of arrival."
    claims, _ = read_answer(answer, [], [{"role": "user", "content": q}], focus, rb)
    assert sorted(str(c.fact) for c in claims) == ["per_diem(arrival_day, 52 EUR)", "per_diem(full_day, 52 EUR)"]
    answer = "The per diem for full travel day is EUR 52."
    claims, _ = read_answer(answer, [], [{"role": "user", "content": q}], focus, rb)
    assert [str(c.fact) for c in claims] == ["per_diem(full_day, 52 EUR)"]


def test_a_chinese_sentence_may_use_a_relations_english_name(rb):
    # a relation with no Chinese name is composed into a Chinese answer with its English one
    assert _phrased(rb, "巴黎住 4 晚最多多少？", "巴黎，4 晚的hotel stay cost为EUR 720 [1]。") == [
        "hotel_stay_limit(paris, 4, 720 EUR)"]
    assert _phrased(rb, "柏林是几类城市？", "柏林的 city tier 是 Tier 2。") == ["city_tier(berlin, tier_2)"]
