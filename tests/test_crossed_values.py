"""A value said of its neighbour's label is not grounded: rows of one table, or clauses of one sentence, that
state two values of one kind under two labels."""
from __future__ import annotations

from pipeline.checks.crossed_values import crossed_by, other_row_named
from pipeline.evidence.passage_facts import extract_evidence
from pipeline.checks.grounding import check_values
from pipeline.text.values import find_values, ValueMention
from pipeline_fakes import FakePassage

TABLE = FakePassage("zh/manual.md", "| 项目 | 数值 |\n|---|---|\n| 最高速度（满载） | 1.5 米/秒 |\n| 最高速度（空载） | 2.0 米/秒 |\n"
                    "| 额定载重 | 200 公斤 |\n", 0.9)
PROSE = FakePassage("products/x.md", "Top speed: loaded 1.5 m/s, empty 2.0 m/s. The AX-200 weighs 300 kg.", 0.9)


class NoRules:
    relations: dict = {}

    def extract(self, text, source=None, **_kw):     # table_header, subject: symbolic.RuleBase.extract's too
        return []


def _evidence(*passages):
    return extract_evidence(list(passages), NoRules())[1]


def _mention(sentence: str, value_text: str) -> ValueMention:
    value, kind, s, e = next(v for v in find_values(sentence) if sentence[v[2]:v[3]] == value_text)
    return ValueMention(value, kind, value_text, s, e, [], sentence)


def test_a_table_value_said_of_the_other_rows_label_is_not_grounded():
    ev = _evidence(TABLE)
    one_five = next(e for e in ev if e.text == "1.5 米/秒")
    assert crossed_by("空载时最高速度是 1.5 米/秒。", one_five, ev).text == "2.0 米/秒"
    assert crossed_by("满载时最高速度是 1.5 米/秒。", one_five, ev) is None
    assert crossed_by("最高速度是 1.5 米/秒。", one_five, ev) is None          # no label at all: not crossed
    [report] = check_values([_mention("空载时最高速度是 1.5 米/秒。", "1.5 米/秒")], ev)
    assert report.verdict == "unsupported" and "the answer says it of what" in report.explanation
    [report] = check_values([_mention("满载时最高速度是 1.5 米/秒。", "1.5 米/秒")], ev)
    assert report.verdict == "supported"


def test_clauses_of_one_sentence_label_their_own_values():
    ev = _evidence(PROSE)
    [one_five] = [e for e in ev if e.text == "1.5 m/s"]
    assert crossed_by("The empty top speed is 1.5 m/s.", one_five, ev).text == "2.0 m/s"
    assert crossed_by("The loaded top speed is 1.5 m/s, less than empty.", one_five, ev) is None
    # values of another kind are no neighbours: the weight is not a speed
    [weight] = [e for e in ev if e.text == "300 kg"]
    assert crossed_by("Loaded it weighs 300 kg.", weight, ev) is None


def test_a_same_row_neighbour_does_not_change_how_other_rows_are_compared():
    # the 24 months' same-row neighbour (12 months) is compared by the words before each value; the LX-500 row
    # after it is compared by whole rows, so "delivery" (only in the AX-200 row) still counts as its own label
    table = FakePassage("warranty.md", "| Model | Robot | Battery | Counted |\n|---|---|---|---|\n"
                        "| AX-200 | 24 months | 12 months | from delivery |\n"
                        "| LX-500 | 36 months | 18 months | from acceptance |\n", 0.9)
    ev = _evidence(table)
    [ax_robot] = [e for e in ev if e.text == "24 months"]
    assert crossed_by("The LX-500 warranty from delivery is 24 months.", ax_robot, ev) is None
    assert crossed_by("The LX-500 warranty from acceptance is 24 months.", ax_robot, ev).text == "36 months"


SLA = FakePassage("support/sla.md", "| Severity | Standard Support | Premium Support |\n|---|---|---|\n"
                  "| Severity 1 | 1 hour, 24/7 | 30 minutes, 24/7 |\n| Severity 2 | 4 hours, 24/7 | 2 hours, 24/7 |\n"
                  "| Severity 3 | 8 business hours | 4 business hours |\n", 0.9)


def test_a_row_grounds_no_value_said_of_another_rows_label():
    ev = _evidence(SLA)
    four = next(e for e in ev if e.text == "4 business hours")
    assert other_row_named("A Severity 1 ticket gets a response within 4 business hours.", four, ev) is not None
    assert other_row_named("A Severity 3 ticket gets a response within 4 business hours.", four, ev) is None
    assert other_row_named("Premium Support responds within 4 business hours.", four, ev) is None  # no row named
    # "Severity 1" in "Severity 10" is no mention of it
    assert other_row_named("A Severity 10 ticket gets a response within 4 business hours.", four, ev) is None
    [report] = check_values([_mention("A Severity 1 ticket gets a response within 4 business hours.",
                                      "4 business hours")], ev)
    assert report.verdict == "unsupported"
    [report] = check_values([_mention("A Severity 3 ticket gets a response within 4 business hours.",
                                      "4 business hours")], ev)
    assert report.verdict == "supported"


def test_chinese_row_labels_are_found_inside_chinese_sentences():
    tiers = FakePassage("zh/travel.md", "| 城市分类 | 住宿标准 |\n|---|---|\n| 一类城市 | 700 元 |\n| 二类城市 | 500 元 |\n", 0.9)
    ev = _evidence(tiers)
    seven = next(e for e in ev if e.text == "700 元")
    assert other_row_named("杭州是二类城市，住宿标准每晚 700 元。", seven, ev) is not None
    assert other_row_named("上海是一类城市，住宿标准每晚 700 元。", seven, ev) is None
    assert other_row_named("住宿标准每晚 700 元。", seven, ev) is None


def test_a_value_counted_per_another_unit_is_another_measure():
    # blind/02 ans-02 with the 135M model and no rule files: "costs £1,000 per year" was verified by the add-on's
    # call-out limit "GBP 1,000 per call-out"; its premium is GBP 100 a year
    addon = FakePassage("products/homeshield.md", "| Add-on | Annual premium (GBP) |\n|---|---|\n| Home emergency | 100 |\n\n"
                        "The home emergency add-on pays up to GBP 1,000 per call-out for a contractor.", 0.9)
    ev = _evidence(addon)
    cited = lambda m: ValueMention(m.value, m.kind, m.text, m.start, m.end, ["products/homeshield.md"], m.context)
    [report] = check_values([cited(_mention("The home emergency add-on costs £1,000 per year.", "£1,000"))], ev)
    assert report.verdict == "unsupported"
    assert "per call-out" in report.explanation and "per year" in report.explanation
    # the same unit, or none said on either side, still grounds it
    [report] = check_values([cited(_mention("The add-on pays GBP 1,000 per call-out.", "GBP 1,000"))], ev)
    assert report.verdict == "supported"
    [report] = check_values([cited(_mention("The add-on pays up to £1,000.", "£1,000"))], ev)
    assert report.verdict == "supported"


def test_the_unit_after_per_need_not_be_a_known_period():
    from pipeline.text.periods import periods
    assert periods("pays up to GBP 1,000 per call-out") == {"call-out"}
    assert periods("USD 5,000 per claims, EUR 20 per annum") == {"claim", "year"}
    assert periods("5 per cent, as per the handbook, per capita") == set()
