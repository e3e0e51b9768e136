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
    ("4 business hours", "4 working hours"), ("3 个工作小时", "3 business hours"),
])
def test_equal_after_normalisation(a, b):
    assert parse_value(a) == parse_value(b)
    assert hash(parse_value(a)) == hash(parse_value(b))


@pytest.mark.parametrize("a,b", [
    ("1 month", "30 days"), ("$500", "¥500"), ("10%", "10"), ("5 workdays", "5 days"), ("2 weeks", "15 days"),
    ("4 business hours", "4 hours"), ("4 business hours", "4"),   # office hours: no fixed count of clock hours
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
    assert value_type(parse_value("8 business hours")) == "duration" and str(parse_value("8 business hours")) == \
        "8 business hours"


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


# -- regressions: "1.5 m/s" was read as 1.5 m (length) and "−10 °C" as a bare 10 ----------------------

def _found(text: str) -> list[tuple[object, str]]:
    from pipeline.text.values import find_values
    return [(v, text[s:e]) for v, _kind, s, e in find_values(text)]


@pytest.mark.parametrize("text, value, unit, span", [
    ("The maximum speed is 1.5 m/s.", 1.5, "m/s", "1.5 m/s"),
    ("It drives up to 1.2 m/s when loaded.", 1.2, "m/s", "1.2 m/s"),
    ("最高速度 2.0 米/秒。", 2.0, "m/s", "2.0 米/秒"),
    ("It works down to −10 °C.", -10.0, "°c", "−10 °C"),      # U+2212 minus sign
    ("It works down to -10 °C.", -10.0, "°c", "-10 °C"),
    ("存放温度不得低于 -5 ℃。", -5.0, "°c", "-5 ℃"),
])
def test_speeds_and_signed_temperatures_are_read_whole(text, value, unit, span):
    [(v, got)] = _found(text)
    assert got == span
    assert isinstance(v, Quantity) and v.value == value and v.unit == unit


def test_speed_and_temperature_are_their_own_dimensions():
    assert parse_value("1.5 m/s") != parse_value("1.5 m")                 # a speed is no length
    assert parse_value("3.6 km/h") == parse_value("1 m/s")                # converted within speed
    assert parse_value("1.5 m/s") < parse_value("2.0 m/s")
    assert parse_value("−10 °C") == parse_value("-10℃") == Quantity(-10, "°C")
    assert parse_value("−10 °C") != parse_value("10 °C")
    assert parse_value("−10 °C") < parse_value("0 °C")
    assert parse_value("-3") == Quantity(-3) and parse_value("−3") == -3
    assert str(parse_value("1.5 m/s")) == "1.5 m/s"                        # no plural "m/ss"
    assert value_type(parse_value("1.5 m/s")) == "quantity"


@pytest.mark.parametrize("text, expected", [
    ("AX-200", []),                                   # a hyphen inside a name is no minus sign
    ("10-25 °C", [(10.0, ""), (25.0, "°c")]),         # a range: the dash is no sign
    ("0–40 °C", [(0.0, ""), (40.0, "°c")]),           # en dash range
    ("- 5 days", [(5.0, "day")]),                     # a list bullet, not minus five
    ("2024-03-01", [(dt.date(2024, 3, 1), None)]),    # dates keep their hyphens
])
def test_hyphens_that_are_not_minus_signs(text, expected):
    got = [(getattr(v, "value", None), getattr(v, "unit", None)) for v, _ in _found(text)]
    assert got == expected


@pytest.mark.parametrize("text, expected", [
    ("The MV-7 carries 8 Euro pallets on one deck.", [("number", "8")]),
    ("| Frostline SR-33 | 33 Euro-pallets |", [("number", "33")]),
    ("It costs 8 euros per pallet.", [("money", "8 euros")]),
    ("EUR 8 per pallet", [("money", "EUR 8")]),
])
def test_a_euro_pallet_is_counted_not_paid(text, expected):
    from pipeline.text.values import find_values
    assert [(kind, text[s:e]) for _v, kind, s, e in find_values(text)] == expected


def test_miles_are_a_length():
    # blind/03's author (obstacle 7) had to type mileage as a bare number
    from symbolic.values import format_value
    assert parse_value("12 miles") == parse_value("19.312128 km")
    assert parse_value("5 英里") == parse_value("5 miles")
    assert parse_value("1 mile") < parse_value("2 km") < parse_value("2 miles")
    assert format_value(parse_value("12 miles")) == "12 miles" and format_value(parse_value("1 mile")) == "1 mile"
