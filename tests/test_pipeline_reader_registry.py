"""The readers' registry: one Reading per draft, readers run by name in the configured order, any of them off by
leaving it out; an unknown name is refused when the answerer is built."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig
from pipeline.question.focus import parse_question
from pipeline.readers.reading import Reading
from pipeline.readers.registry import OPT_IN, READERS, REGISTRY, check_readers, read, read_answer
from pipeline_fakes import FixedRetriever, ScriptedGenerator, rulebase_of

RULES = """
type day "day type"
entity day arrival "arrival day"
entity day full "full travel day"
relation per_diem(d: day, x: money[EUR]) "per diem"
relation meal_limit(d: day, x: money[EUR]) "meal limit"
"""
Q = "What is the per diem on the arrival day?"
ANSWER = "Per diem (arrival day): EUR 26."


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def test_the_default_order_runs_every_registered_reader_once_the_model_reader_opt_in():
    assert READERS == tuple(REGISTRY) and len(set(READERS)) == len(READERS)
    assert READERS[:4] == ("named", "phrases", "focus", "vocabulary") and READERS[-1] == "goal_conclusions"
    assert OPT_IN == {"model"} and "model" in READERS


def test_a_reader_left_out_reads_nothing(rb):
    focus = parse_question(Q, rb)
    claims, left = read_answer(ANSWER, [], [], focus, rb)
    assert [str(c.fact) for c in claims] == ["per_diem(arrival, 26 EUR)"] and left == []
    claims, left = read_answer(ANSWER, [], [], focus, rb, order=["labels"])
    assert [str(c.fact) for c in claims] == ["per_diem(arrival, 26 EUR)"] and left == []      # the labels reader alone
    claims, left = read_answer(ANSWER, [], [], focus, rb, order=[])       # the rule-file patterns alone: none here
    assert claims == [] and [m.text for m in left] == ["EUR 26"]


def test_one_reading_carries_the_draft_through_every_reader(rb):
    focus = parse_question(Q, rb)
    reading = read(Reading(ANSWER, [], [], focus, rb), check_readers(n for n in READERS if n not in OPT_IN))
    assert reading.answer == ANSWER and reading.focus is focus and reading.rulebase is rb
    assert [m.text for m in reading.mentions] == ["EUR 26"] and reading.left == []
    assert [str(c.fact) for c in reading.claims] == ["per_diem(arrival, 26 EUR)"]


def test_an_unknown_reader_is_refused_when_the_answerer_is_built(rb):
    with pytest.raises(ValueError, match=r"unknown reader\(s\) 'lables'; registered: named, phrases"):
        Answerer(ScriptedGenerator([]), FixedRetriever([]), rb, AnswererConfig(readers=("named", "lables")))
    ok = Answerer(ScriptedGenerator([]), FixedRetriever([]), rb, AnswererConfig(readers=("focus",)))
    assert ok.readers == ("focus",)
