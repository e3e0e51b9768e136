"""An answer to one question that copies a source's list states another subject's value: the clause of the same
build that shares no word with the question is no part of the answer (blind/07 ans-07 without rules: works on
paper 50 lux, oil paintings 200 lux)."""
from __future__ import annotations

from pipeline.checks.scope import values_for_the_unasked
from pipeline.question.focus import parse_question
from pipeline.text.values import find_values
from pipeline.text.values import ValueMention


def _check(question, answer):
    mentions = [ValueMention(v, kind, answer[s:e], s, e) for v, kind, s, e in find_values(answer)]
    return values_for_the_unasked(parse_question(question, None), answer, mentions)


def test_a_copied_list_states_another_subjects_value():
    why = _check("纸本作品展出时的最高照度是多少？", "纸本作品展出照度不超过 50 勒克斯，油画不超过 200 勒克斯。 [1]")
    assert why is not None and "200" in why
    why = _check("What is the maximum illuminance for works on paper?",
                 "Works on paper may be lit up to 50 lux; oil paintings may be lit up to 200 lux [1].")
    assert why is not None and "'200'" in why


def test_a_second_value_of_another_build_or_asked_stays():
    # a deadline after an amount, a computation, a second value the question asks for
    assert _check("How many days of annual leave can staff carry over?",
                  "Staff may carry over up to 5 days, to be taken within 3 months [1].") is None
    assert _check("What is the fee for 5 objects?", "The fee is GBP 450 per object. 5 × GBP 450 = GBP 2,250 [1].") is None
    assert _check("What is the illuminance for works on paper and for oil paintings?",
                  "Works on paper may be lit up to 50 lux; oil paintings may be lit up to 200 lux [1].") is None
    # both subjects asked (a comparison)
    assert _check("Why may oil paintings be lit more than works on paper?",
                  "Works on paper may be lit up to 50 lux; oil paintings may be lit up to 200 lux [1].") is None
