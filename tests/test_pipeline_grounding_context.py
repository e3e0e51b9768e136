"""Regressions from the default-domain eval: an uncited value grounded by an off-topic passage sentence
(ans-02) and an answer that only restates the question (fp-12) must not be verified."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline.text.terms import content_terms, restates, shares_context
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

RULES = """
type group "employee group" aka "employees"
entity group full_time "full-time employee" aka "full-time employees"
relation annual_leave_days(g: group, days: duration[day]) "annual leave" unique
pattern leave_en: "{d:duration} of annual leave" -> annual_leave_days(full_time, ?d)
"""
# The shapes of kb/products/lx500.md and kb/support/warranty_returns.md that ans-02 retrieved.
PRODUCT = FakePassage("products/lx500.md", "| Battery | LiFePO4, 48 V |\n| Runtime per charge | up to 8 hours |\n", 0.9)
WARRANTY = FakePassage("support/warranty_returns.md",
                       "| Product | Robot warranty | Battery warranty |\n| AX-200 | 24 months | 12 months |\n"
                       "| LX-500 | 36 months | 18 months |\n", 0.8, start=500)
ANS_02 = "The LX-500 runs on one battery charge for 12 months, with a runtime of 18 months."
QUESTION = "How long does the LX-500 run on one battery charge?"


@pytest.fixture(scope="module")
def rulebase(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "leave.rules")


def ask(rulebase, answers, question=QUESTION, passages=(PRODUCT, WARRANTY), **opts):
    """The drafts decide (symbolic answers off): these tests are about grounding the model's own values."""
    gen = ScriptedGenerator(list(answers))
    answerer = Answerer(gen, FixedRetriever(list(passages)), rulebase,
                        AnswererConfig(symbolic_answers=False, lm_extraction=False))
    return answerer.ask(question, AskOptions(**opts)), gen


def test_content_terms_blank_values_and_fold_plurals():
    assert content_terms("| AX-200 | 24 months | 12 months |") == {"ax-200"}
    assert content_terms("The LX-500 runs 8 hours per charge.") == {"lx-500", "run", "charge"}
    assert content_terms("满载速度") == {"满载", "载速", "速度"}
    assert shares_context("runs for 12 months", "| Runtime per charge | up to 8 hours |") is False
    assert shares_context("LX-500 runtime 18 months", "| LX-500 | 36 months | 18 months |") is True


def test_ans_02_uncited_value_from_another_context_is_unsupported(rulebase):
    r, _ = ask(rulebase, [ANS_02], policy="flag")
    assert r.status == "flagged"
    by_text = {c.text: c for c in r.claims}
    # "12 months" is stated only in the AX-200 warranty row, and the answer says it of the LX-500's row
    assert by_text["12 months"].verdict == "unsupported"
    why = by_text["12 months"].explanation
    assert "for 'AX-200 | 24 months | 12 months'" in why and "the answer says it of what 'LX-500" in why
    # "18 months" sits in the LX-500 row: same subject. The answer cited nothing, so the verifier cites the row for
    # the value it finds there (issue 47: it attributes what it can, the value found nowhere stays uncited and fails)
    assert by_text["18 months"].verdict == "supported" and by_text["18 months"].cf == pytest.approx(1.0)
    assert r.attempts[0].cited_by_verifier == [2]           # source [2]: the warranty table


def test_ans_02_regenerates_to_the_grounded_value(rulebase):
    right = "The LX-500 runs up to 8 hours per charge [1]."
    r, gen = ask(rulebase, [ANS_02, right])
    assert r.status == "regenerated" and r.answer == right and len(gen.calls) == 2
    assert [(c.text, c.verdict) for c in r.claims] == [("8 hours", "supported")]
    assert "12 months" in r.attempts[0].feedback


def test_citing_the_passage_still_grounds_the_value(rulebase):
    cited = "The AX-200 battery warranty is 12 months [2]."
    r, _ = ask(rulebase, [cited], question="What is the AX-200 battery warranty?", policy="flag")
    assert r.status == "verified" and r.claims[0].cf == pytest.approx(1.0)


FP_Q = "AX-200 满载时最高速度是 2.0 米/秒，那空载时呢？"
AX = FakePassage("zh/ax200_manual.md", "最高速度：满载 2.0 米/秒，空载 2.5 米/秒。", 0.9)


def test_fp_12_restating_the_question_is_not_verified(rulebase):
    r, gen = ask(rulebase, [FP_Q], question=FP_Q, passages=[AX], policy="flag")
    assert r.status == "flagged" and "restates the question" in r.reason
    assert r.claims == []    # its one value is the question's own, restated: not a claim of the answer
    assert "no specific fact" in r.attempts[0].feedback


def test_fp_12_regenerates_to_a_real_answer(rulebase):
    real = "AX-200 空载时最高速度是 2.5 米/秒 [1]。"
    r, gen = ask(rulebase, [FP_Q + " [1]", real], question=FP_Q, passages=[AX])
    assert r.status == "regenerated" and r.answer == real
    assert [c.text for c in r.claims] == ["2.5 米/秒"]


@pytest.mark.parametrize("answer, question, expected", [
    ("How long does the LX-500 run?", "How long does the LX-500 run?", True),
    ("The LX-500 runs 8 hours per charge [1].", "Does the LX-500 run 8 hours per charge?", True),
    ("Yes, the LX-500 runs 8 hours per charge.", "Does the LX-500 run 8 hours per charge?", False),
    ("The LX-500 runs up to 8 hours per charge.", "How long does the LX-500 run?", False),
    ("AX-200 空载时最高速度是 2.5 米/秒。", FP_Q, False),
    ("", "How long?", False),
])
def test_restates(answer, question, expected):
    assert restates(answer, question) is expected


def test_decimal_point_does_not_end_the_value_sentence():
    from pipeline.text.sentences import sentences
    text = "最高速度是 2.0 米/秒，空载更快。The LX-500 drives at 1.5 m/s. Next [1]."
    assert [text[s:e] for s, e in sentences(text)] == ["最高速度是 2.0 米/秒，空载更快。",
                                                       "The LX-500 drives at 1.5 m/s.", " Next [1]."]


def test_uncited_decimal_value_keeps_the_words_after_it(rulebase):
    # Before the fix "1.5 m/s" split the answer sentence at "1.", dropping "loaded" from its context.
    speed = FakePassage("products/lx500.md", "| Top speed, loaded | 1.5 m/s |\n", 0.9)
    r, _ = ask(rulebase, ["It drives 1.5 m/s when loaded."], question="How fast?", passages=[speed], policy="flag")
    assert r.claims[0].text == "1.5 m/s" and r.claims[0].verdict == "supported"     # grounded by "loaded"
    # it cited nothing, and the row stating it shares "loaded": the verifier cites [1] for it, and says so
    assert r.status == "verified" and r.answer == "It drives 1.5 m/s when loaded. [1]"
    assert r.attempts[0].cited_by_verifier == [1] and "added by the verifier" in r.reason
    # a row sharing no word with the answer's sentence is no attribution: nothing is added
    r, _ = ask(rulebase, ["It weighs 1.5 m/s."], question="How fast?", passages=[speed], policy="flag")
    assert r.status == "flagged" and r.attempts[0].cited_by_verifier == []


OLD_POLICY = FakePassage("hr/leave_2023.md", "Full-time employees receive 25 days of annual leave.", 0.9,
                         superseded=True, superseded_by="hr/leave_2025.md")
NEW_POLICY = FakePassage("hr/leave_2025.md", "Full-time employees receive 30 days of annual leave.", 0.8)
LEAVE_Q = "How much annual leave do full-time employees get?"


def test_a_fact_supported_only_by_a_source_the_answer_does_not_cite_says_so(rulebase):
    # the README's default question: the right (2025) value, cited to the superseded 2023 policy, which the
    # prompt lists second (a superseded passage ranks at half its score)
    wrong_cite = "Full-time employees get 30 days of annual leave [2]."
    r, gen = ask(rulebase, [wrong_cite], question=LEAVE_Q, passages=[OLD_POLICY, NEW_POLICY], policy="flag")
    assert gen.calls[0][0]["content"].index("[1] (hr/leave_2025.md)") < gen.calls[0][0]["content"].index("[2] (hr/leave_2023.md)")
    # the fact checks out, the citation does not: not verified, and the regeneration is told why
    assert r.status == "flagged" and "cites a source that does not state it" in r.reason
    assert "cite the number of the source that states each, like [1]" in r.attempts[0].feedback
    (claim,) = r.claims
    assert claim.relation == "annual_leave_days" and claim.verdict == "supported"
    assert claim.cited == ["hr/leave_2023.md"] and claim.cf == pytest.approx(0.8)
    assert "the answer does not cite hr/leave_2025.md, which states it: it cites hr/leave_2023.md" in claim.explanation
    assert "25 day" in claim.explanation and "(superseded)" in claim.explanation  # what the cited source says


def test_a_right_fact_that_cites_nothing_gets_the_current_source_cited(rulebase):
    r, _ = ask(rulebase, ["Full-time employees get 30 days of annual leave."], question=LEAVE_Q,
               passages=[OLD_POLICY, NEW_POLICY], policy="flag")
    (claim,) = r.claims
    assert r.status == "verified" and r.answer.endswith("annual leave. [1]")       # [1]: the current 2025 policy
    assert claim.cited == ["hr/leave_2025.md"] and claim.cf == pytest.approx(1.0)
    # a wrong value is not attributed to anything: it stays uncited and fails
    r, _ = ask(rulebase, ["Full-time employees get 28 days of annual leave."], question=LEAVE_Q,
               passages=[OLD_POLICY, NEW_POLICY], policy="flag")
    assert r.status == "flagged" and r.attempts[0].cited_by_verifier == []


def test_citing_the_source_that_states_the_fact_keeps_full_certainty(rulebase):
    right_cite = "Full-time employees get 30 days of annual leave [1]."
    r, _ = ask(rulebase, [right_cite], question=LEAVE_Q, passages=[OLD_POLICY, NEW_POLICY], policy="flag")
    assert r.status == "verified" and "does not cite" not in r.reason
    (claim,) = r.claims
    assert claim.cited == ["hr/leave_2025.md"] and claim.cf == pytest.approx(1.0)
    assert "does not cite" not in claim.explanation


def test_a_number_with_an_unknown_unit_does_not_borrow_another_kinds_value(rulebase):
    # eval un-02 with the 0.5B model: "38,500 decibels" was verified by the AX-200's EUR 38,500 list price
    price = FakePassage("products/ax200.md", "The list price of one AX-200 is EUR 38,500.", 0.9)
    r, _ = ask(rulebase, ["The noise level of the AX-200 is 38,500 decibels [1]."],
               question="What is the noise level of the AX-200 in decibels?", passages=[price], policy="flag")
    assert r.status == "flagged" and r.claims[0].text == "38,500" and r.claims[0].verdict == "unsupported"
    robots = FakePassage("sales/orders.md", "An order of 12 robots gets a volume discount.", 0.9)
    r, _ = ask(rulebase, ["The discount applies to 12 robots [1]."], question="How many robots?", passages=[robots],
               policy="flag")
    assert r.claims[0].verdict == "supported"       # the same count of the same thing still matches


def test_a_value_restated_from_the_question_is_not_checked_and_does_not_block_citing(rulebase):
    trip = FakePassage("finance/travel.md", "The per diem for a full travel day is EUR 52.", 0.9)
    r, _ = ask(rulebase, ["The per diem for a 3-day trip day is EUR 52."], question="What is the per diem for a 3-day trip?",
               passages=[trip], policy="flag")
    assert r.status == "verified", r.reason
    assert r.answer.endswith("[1]") and [c.text for c in r.claims] == ["EUR 52"]


def test_a_wrapped_paragraph_keeps_its_subject_with_its_value():
    from pipeline.text.sentences import sentences
    text = "## 2. Telemetry\n\nRobots send telemetry. Raw telemetry\nis kept for 24 months; after that\nnothing.\n| A | 1 |\n| B | 2 |\n"
    assert [text[s:e].strip() for s, e in sentences(text)] == [
        "## 2.", "Telemetry", "Robots send telemetry.",
        "Raw telemetry\nis kept for 24 months; after that\nnothing.", "| A | 1 |", "| B | 2 |"]
