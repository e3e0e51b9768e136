"""Value normalisation: units, money, percentages, dates, Chinese numerals; equal after normalisation."""
import datetime as dt

import pytest

from symbolic.numerals import parse_zh_numeral
from symbolic.values import Date, Duration, Money, Percentage, Quantity, parse_value, value_type


@pytest.mark.parametrize("a,b", [
    ("2 weeks", "14 days"), ("两周", "14 days"), ("十五天", "15 days"), ("1 year", "12 months"),
    ("a week", "7 days"), ("48 hours", "2 days"), ("$1,200", "USD 1200"), ("1200 dollars", "$1,200.00"),
    ("¥500", "500 元"), ("5,000 元", "CNY 5000"), ("1.2万元", "12,000 元"), ("10%", "百分之十"),
    ("10 percent", "10 %"), ("2024-03-01", "March 1, 2024"), ("2024年3月1日", "1 March 2024"),
    ("二十五天", "25 days"), ("两个月", "2 months"), ("10 working days", "十个工作日"),
])
def test_equal_after_normalisation(a, b):
    assert parse_value(a) == parse_value(b)
    assert hash(parse_value(a)) == hash(parse_value(b))


@pytest.mark.parametrize("a,b", [
    ("1 month", "30 days"), ("$500", "¥500"), ("10%", "10"), ("5 workdays", "5 days"), ("2 weeks", "15 days"),
])
def test_not_equal(a, b):
    assert parse_value(a) != parse_value(b)


def test_types_and_values():
    assert parse_value("3 months") == Duration(3, "month") and value_type(parse_value("3 months")) == "duration"
    assert parse_value("$1,200") == Money(1200, "USD")
    assert parse_value("¥500").currency == "CNY"
    assert parse_value("10%") == Percentage(10)
    assert parse_value("2024-02-29") == Date(dt.date(2024, 2, 29))
    assert parse_value("25") == Quantity(25) == 25
    assert parse_value("5 kg") == Quantity(5000, "g")
    assert Quantity(25, "day") == parse_value("25 days")  # the contract's spelling


def test_ordering_and_conversion():
    assert parse_value("2 weeks") > parse_value("10 days")
    assert parse_value("1 month") < parse_value("40 days")  # approximate month only for ordering
    assert parse_value("3 weeks").to("day") == Duration(21, "day") and parse_value("3 weeks").to("day").value == 21
    with pytest.raises(TypeError):
        _ = parse_value("$5") < parse_value("¥5")
    with pytest.raises(ValueError):
        parse_value("2 weeks").to("kg")


@pytest.mark.parametrize("text,n", [("十", 10), ("十五", 15), ("二十", 20), ("一百零五", 105), ("两千", 2000),
                                    ("一万二千", 12000), ("三亿", 300_000_000), ("二〇二四", 2024)])
def test_chinese_numerals(text, n):
    assert parse_zh_numeral(text) == n


@pytest.mark.parametrize("bad", ["", "   ", "banana", "2024-02-30", "12 furlongs"])
def test_bad_input_is_a_clear_value_error(bad):
    with pytest.raises(ValueError, match="value|date"):
        parse_value(bad)
