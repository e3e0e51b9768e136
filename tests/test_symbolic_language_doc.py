"""symbolic/LANGUAGE.md's table of value types says what parses: every example value and unit in it is read."""
import re
from pathlib import Path

import pytest

from symbolic.values import CURRENCIES, UNITS, canonical_currency, canonical_unit, parse_value, value_type

DOC = (Path(__file__).resolve().parents[1] / "symbolic" / "LANGUAGE.md").read_text(encoding="utf-8")
TABLE = DOC[DOC.index("| type | values | units in `[ ]` |"):]
ROWS = [r for r in TABLE.split("\n\n")[0].splitlines()[2:]]


def cells(row):
    return [c.strip() for c in row.strip("|").split("|")]


EXAMPLES = [(cells(r)[0].split("`")[1], v) for r in ROWS for v in re.findall(r"`([^`]+)`", cells(r)[1])]
UNITS_LISTED = [(cells(r)[0].split("`")[1], u) for r in ROWS for grp in re.findall(r"`([^`]+)`", cells(r)[2])
                for u in grp.split()]


@pytest.mark.parametrize("vtype, text", [e for e in EXAMPLES if e[0] != "text"])
def test_every_example_value_parses_as_its_type(vtype, text):
    v = parse_value(text.strip('"'))
    assert value_type(v) == vtype or (vtype == "quantity" and value_type(v) == "duration")


@pytest.mark.parametrize("vtype, unit", UNITS_LISTED)
def test_every_listed_unit_is_known(vtype, unit):
    if vtype == "money":
        assert canonical_currency(unit) in CURRENCIES
    else:
        assert canonical_unit(unit) in UNITS


def test_the_table_is_read():
    assert len(EXAMPLES) >= 25 and len(UNITS_LISTED) >= 25
