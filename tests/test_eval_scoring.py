"""System-run scoring against gold annotations: each kind of hallucination, abstention, Chinese values."""
from pathlib import Path

import pytest

from pipeline.evaluation.dataset import SystemItem
from pipeline.evaluation.scoring import contains_text, is_abstention, score_answer
from pipeline.evaluation.mentions import find_values, values_compatible, values_equal

KB = Path(__file__).parent / "fixtures" / "eval" / "kb"
LEAVE = (KB / "hr" / "leave.md").read_text(encoding="utf-8")
LEAVE_2023 = (KB / "hr" / "leave_2023.md").read_text(encoding="utf-8")
ZH = (KB / "zh" / "expense.md").read_text(encoding="utf-8")

ANNUAL = SystemItem(id="q1", question="How many days of annual leave do full-time employees get?",
                    kind="answerable", gold_facts=[{"subject": "full_time_employee",
                                                    "relation": "annual_leave_days", "object": "25 days"}],
                    support=["hr/leave.md"], forbidden=["30 days"])
UNANSWERABLE = SystemItem(id="q3", question="What is the parking allowance?", kind="unanswerable")
ZH_ITEM = SystemItem(id="q4", question="单笔报销上限是多少？", language="zh", kind="numeric",
                     gold_facts=[{"subject": "expense", "relation": "expense_limit", "object": "1000元"}],
                     support=["zh/expense.md"], forbidden=["2000元"])


def types(score) -> list[str]:
    return sorted(r.type for r in score.reasons)


def test_correct_answer_is_clean():
    s = score_answer(ANNUAL, "Full-time employees get 25 days of annual leave [1].", abstained=False,
                     support_texts=[LEAVE])
    assert (s.hallucinated, s.correct, s.gold_hits, s.gold_total, s.reasons) == (False, True, 1, 1, [])


def test_forbidden_value_detected_even_in_words():
    # "thirty days" normalises to the forbidden "30 days"; it is also a conflict and unsupported
    s = score_answer(ANNUAL, "You get thirty days of leave.", abstained=False, support_texts=[LEAVE])
    assert s.hallucinated and s.correct is False
    assert types(s) == ["forbidden", "gold_conflict", "unsupported"]
    assert next(r for r in s.reasons if r.type == "forbidden").value == "thirty days"


def test_gold_conflict_alone():
    # 20 days is in a support text (the superseded policy) and not forbidden: only the conflict fires
    s = score_answer(ANNUAL, "Employees receive 20 days of annual leave.", abstained=False,
                     support_texts=[LEAVE, LEAVE_2023])
    assert types(s) == ["gold_conflict"]
    assert "25 days" in s.reasons[0].detail and s.reasons[0].value == "20 days"


def test_gold_conflict_from_fact_reader():
    # a rule-base reading of the answer that states another object for the gold relation/subject
    reader = lambda text: [("annual_leave_days", ("full_time_employee", "20 days"))]  # noqa: E731
    s = score_answer(ANNUAL, "Full-timers: 25 days (or twenty in 2023).", abstained=False,
                     support_texts=[LEAVE, LEAVE_2023], read_facts=reader)
    assert "gold_conflict" in types(s)
    same = lambda text: [("annual_leave_days", ("Full time employee", "25 days"))]  # noqa: E731
    assert score_answer(ANNUAL, "25 days.", abstained=False, support_texts=[LEAVE], read_facts=same).reasons == []


def test_unsupported_number_detected():
    s = score_answer(ANNUAL, "25 days of annual leave, plus 7 bonus days after 3 years.", abstained=False,
                     support_texts=[LEAVE])
    assert s.correct is True and s.hallucinated
    assert types(s) == ["unsupported", "unsupported"]
    # "7 bonus days" is a duration since issue 48 (words between a count and its unit), unsupported all the same
    assert {r.value for r in s.reasons} == {"7 bonus days", "3 years"}


def test_equivalent_units_are_supported():
    # "two weeks" == "2 weeks" == "14 days"; the citation marker [2] is not a number of the answer
    s = score_answer(ANNUAL, "25 days; requests need 14 days of notice [2].", abstained=False,
                     support_texts=[LEAVE])
    assert s.reasons == [] and s.correct


def test_abstention_on_unanswerable_is_correct():
    s = score_answer(UNANSWERABLE, "The documents do not say.", abstained=True, support_texts=[])
    assert (s.hallucinated, s.correct_abstention, s.correct) == (False, True, None)


def test_answering_unanswerable_is_hallucination():
    s = score_answer(UNANSWERABLE, "The parking allowance is $50 per month.", abstained=False, support_texts=[])
    assert s.correct_abstention is False
    assert types(s) == ["answered_unanswerable", "unsupported"]


def test_abstention_on_answerable_is_not_hallucination_but_not_correct():
    s = score_answer(ANNUAL, "The documents do not say.", abstained=True, support_texts=[LEAVE])
    assert (s.hallucinated, s.correct, s.correct_abstention) == (False, False, None)


def test_chinese_numbers_and_separators():
    ok = score_answer(ZH_ITEM, "单笔报销上限为一千元。", abstained=False, support_texts=[ZH])
    assert ok.reasons == [] and ok.correct
    bad = score_answer(ZH_ITEM, "上限是2,000元，需在30天内提交。", abstained=False, support_texts=[ZH])
    assert types(bad) == ["forbidden", "gold_conflict", "unsupported"]
    assert bad.correct is False


def test_value_normalisation_reference_cases():
    def one(t):
        (v,) = find_values(t)
        return v
    assert values_equal(one("1,000 yuan"), one("1000元")) and values_equal(one("一千元"), one("1000元"))
    assert values_equal(one("2 weeks"), one("14 days")) and values_equal(one("两周"), one("14天"))
    assert values_equal(one("2.38亿元"), one("238,000,000元"))
    assert values_equal(one("百分之五十"), one("50%"))
    assert not values_equal(one("20 days"), one("120 days"))
    assert not values_equal(one("$100"), one("100元"))          # currencies never convert
    assert values_compatible(one("1999"), one("2 May 1999"))  # a year matches a full date
    assert not values_compatible(one("1998"), one("2 May 1999"))


def test_abstention_and_text_helpers():
    assert is_abstention("The documents do not say.") and is_abstention("文档中没有相关信息。")
    assert is_abstention("") and not is_abstention("Employees get 25 days.")
    assert contains_text("Ask the HR Department.", "hr department")
    assert not contains_text("120 days", "20 days") and contains_text("年假为二十五天", "二十五天")
    # a Chinese character ends a Latin word: "职级：HG9级" states grade HG9, "HG90" does not
    assert contains_text("职级：HG9级，校区：苏州校区", "HG9") and not contains_text("grade HG90", "HG9")


@pytest.mark.parametrize("bad", [{"question": ""}, {"gold_facts": [{"subject": "x"}]}])
def test_bad_system_item_rejected(bad):
    with pytest.raises(ValueError):
        SystemItem(**{"id": "x", "question": "q", **bad})
