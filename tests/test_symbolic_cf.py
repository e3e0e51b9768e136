"""MYCIN certainty-factor arithmetic against hand-computed values."""
import pytest

from symbolic.cf import combine, combine_all, conclude, conjunction, effective_cf
from symbolic.facts import Fact, Provenance


@pytest.mark.parametrize("a,b,expected", [
    (0.6, 0.5, 0.8),            # 0.6 + 0.5 - 0.30
    (0.9, 0.9, 0.99),           # 0.9 + 0.9 - 0.81
    (-0.6, -0.5, -0.8),         # -0.6 - 0.5 + 0.30
    (0.6, -0.4, 1 / 3),         # 0.2 / (1 - 0.4)
    (-0.8, 0.2, -0.75),         # -0.6 / (1 - 0.2)
    (0.5, -0.5, 0.0),           # 0 / 0.5
    (0.0, 0.7, 0.7), (1.0, 0.3, 1.0),
])
def test_combine(a, b, expected):
    assert combine(a, b) == pytest.approx(expected)
    assert combine(b, a) == pytest.approx(expected)


def test_combine_certain_opposites_is_zero_not_a_crash():
    assert combine(1.0, -1.0) == 0.0


def test_combine_all_is_order_independent_for_positives():
    assert combine_all([0.3, 0.4, 0.5]) == pytest.approx(1 - 0.7 * 0.6 * 0.5)  # = 0.79
    assert combine_all([0.5, 0.4, 0.3]) == pytest.approx(0.79)
    assert combine_all([]) == 0.0


def test_conjunction_and_conclusion():
    assert conjunction([0.9, 0.6, 0.75]) == 0.6
    assert conclude(0.6, 0.8) == pytest.approx(0.48)
    assert conclude(0.2, 1.0) == 0.0          # a premise holds only above 0.2
    assert conclude(0.21, 0.5) == pytest.approx(0.105)


def test_superseded_evidence_counts_half():
    assert effective_cf(Fact("r", ("a",), 0.8, Provenance("document", superseded=True))) == pytest.approx(0.4)
    assert effective_cf(Fact("r", ("a",), 0.8, Provenance("document"))) == 0.8


def test_fact_rejects_cf_outside_range():
    with pytest.raises(ValueError, match="outside"):
        Fact("r", ("a",), 1.2)
