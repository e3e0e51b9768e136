"""The evaluation's value mentions come from symbolic.values: spans, kinds and keys in running text."""
import pytest

from pipeline.evaluation.mentions import find_values, values_compatible, values_equal


def found(text):
    return [(v.text, v.kind, v.key) for v in find_values(text)]


@pytest.mark.parametrize("text,expected", [
    ("上限是三千五百元。", [("三千五百元", "money", ("money", 3500.0, "CNY"))]),
    ("一百二十天内", [("一百二十天", "duration", ("duration", 120.0, "day"))]),
    ("约两万五元", [("两万五元", "money", ("money", 25000.0, "CNY"))]),
    ("The flight takes 1 h 30 min.", [("1 h 30 min", "duration", ("duration", 90.0, "minute"))]),
    ("It weighs 1,5 kg.", [("1,5 kg", "quantity", ("quantity", 1.5, "mass"))]),
    ("Budget: USD 1.2k.", [("USD 1.2k", "money", ("money", 1200.0, "USD"))]),
    ("a 6-hour flight", [("6-hour", "duration", ("duration", 6.0, "hour"))]),
    ("市值3.65万亿美元", [("3.65万亿美元", "money", ("money", 3.65e12, "USD"))]),
    ("The AX-200 costs $1,200 on May 3, 2024 at 14:30.",
     [("$1,200", "money", ("money", 1200.0, "USD")), ("May 3, 2024", "date", ("date", 2024, 5, 3)),
      ("14:30", "time", ("time", 14, 30, 0))]),
    ("born 2 November 2004", [("2 November 2004", "date", ("date", 2004, 11, 2))]),
    ("It opened in 1998.", [("1998", "date", ("date", 1998, None, None))]),
    ("1.4亿年前", [("1.4亿", "number", ("number", 1.4e8, ""))]),          # an age, not 1.4亿 years
    ("Parking is $50 a month.", [("$50", "money", ("money", 50.0, "USD"))]),   # "a month" is a rate
    ("七八万元、十三五规划", []),                                            # a range and a name
    ("统一的一些规定", []),                                                  # 一 as a word
    ("one hundred people", [("one hundred", "number", ("number", 100.0, ""))]),
])
def test_mentions(text, expected):
    assert found(text) == expected


def test_equal_and_compatible_use_symbolic_values():
    one = lambda t: find_values(t)[0]  # noqa: E731
    assert values_equal(one("24 hours"), one("1 day"))           # symbolic.values converts within time
    assert values_equal(one("三千五百元"), one("3,500 yuan"))
    assert not values_equal(one("$100"), one("100元"))
    assert values_compatible(one("48 hours"), one("48"))         # loose: the same amount
    assert values_compatible(one("1998"), one("2 May 1998"))
