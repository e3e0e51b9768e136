"""MYCIN certainty-factor arithmetic."""
from __future__ import annotations

from functools import reduce

THRESHOLD = 0.2          # a premise holds only when its CF is above this
SUPERSEDED_FACTOR = 0.5  # evidence from a superseded document counts at half its certainty


def combine(a: float, b: float) -> float:
    """Two independent pieces of evidence for the same conclusion (MYCIN parallel combination)."""
    if a >= 0 and b >= 0:
        return a + b - a * b
    if a <= 0 and b <= 0:
        return a + b + a * b
    denom = 1 - min(abs(a), abs(b))
    return 0.0 if denom == 0 else (a + b) / denom


def combine_all(cfs: list[float]) -> float:
    return reduce(combine, cfs, 0.0)


def conjunction(cfs: list[float]) -> float:
    """Premise CF of an `and` of conjuncts."""
    return min(cfs) if cfs else 1.0


def conclude(premise_cf: float, rule_cf: float) -> float:
    """CF a rule gives its conclusion; 0 when the premise does not hold (CF at most THRESHOLD)."""
    return premise_cf * rule_cf if premise_cf > THRESHOLD else 0.0


def effective_cf(fact) -> float:
    """A fact's CF as evidence: halved when its source document is superseded."""
    return fact.cf * SUPERSEDED_FACTOR if fact.provenance.superseded else fact.cf
