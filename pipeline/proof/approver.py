"""Who may approve instead: a question asking whether someone may approve an amount past their limit ("Can
Jonah Petrakis approve a USD 9,800 order himself?") is answered "no", and an approval matrix (a limit per
grade, per location) says whose limit covers it: the lowest limit at least the amount, of the same relation
and the same other arguments (CR5 at Marrow Bay, USD 25,000). Only for approvals (English and Chinese cues):
a hotel limit per city tier is no ladder the asker may climb."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.lang import alternation, phrase
from pipeline.proof.proving import ProvenAnswer, best_proof, current_evidence
from pipeline.question.focus import Goal
from symbolic import BackwardChainer, Fact, RuleBase
from symbolic.model import VALUE_TYPES
from symbolic.values import Value

# A question about approving (lang/<code>/proof.toml approval).
_APPROVAL = re.compile(alternation("proof.approval"), re.IGNORECASE)
# What follows the covering limit's sentence, per language.
_COVER_WORDS = {code: phrase("proof.cover_words", code) for code in ("en", "zh")}


def _matrix_fact(proof: ProvenAnswer, rulebase: RuleBase) -> Fact | None:
    """The document fact the limit comes from, when its relation is a matrix: an entity first (the grade),
    the value last, and the value the proof's."""
    for f in proof.documents:
        sig = rulebase.relations.get(f.relation)
        if sig is not None and len(f.args) >= 2 and f.args[-1] == proof.value \
                and sig.params[0].type not in VALUE_TYPES:
            return f
    return None


def covering_limit(question: str, stated: Value, proof: ProvenAnswer, rulebase: RuleBase,
                   evidence: Sequence[Fact]) -> ProvenAnswer | None:
    """The proof of the lowest limit that covers ``stated`` (an amount the question asks to approve, past the
    limit ``proof`` proves), on the row of the same matrix with another first argument; None for a question
    that is not about approving, a limit from no matrix, or an amount no row covers."""
    if not _APPROVAL.search(question):
        return None
    fact = _matrix_fact(proof, rulebase)
    if fact is None:
        return None
    current = current_evidence(evidence, rulebase)
    rows = [f for f in current
            if f.relation == fact.relation and len(f.args) == len(fact.args) and f.args[1:-1] == fact.args[1:-1]
            and f.args[0] != fact.args[0]]
    covering = []
    for f in rows:
        try:
            if f.args[-1] >= stated:
                covering.append(f)
        except TypeError:   # another currency or dimension: no comparison
            continue
    if not covering:
        return None
    lowest = min(covering, key=lambda f: f.args[-1])
    chainer = BackwardChainer(rulebase.backward_rules, [*current, *rulebase.facts])
    found = best_proof(chainer, Goal(fact.relation, tuple(lowest.args[:-1]), 1.0))
    return found if found is not None and found.value == lowest.args[-1] else None


def cover_words(*, chinese: bool) -> str:
    """What follows the covering limit's sentence."""
    return _COVER_WORDS["zh" if chinese else "en"]
