"""Score one system-run answer against the dataset's gold annotations only (never the verifier)."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Callable

from pipeline.evaluation.dataset import SystemItem
from pipeline.evaluation.mentions import (ValueMention, find_values, same_dimension, strip_citations,
                                          values_compatible, values_equal)

# An answer that declines to answer. The pipeline's own abstention text is matched too (status
# "abstained"), but plain RAG has no status, so the model's own refusals are recognised by wording.
ABSTAIN_PATTERNS = re.compile(
    r"(do(?:es)? not (?:say|mention|specify|state|contain|provide)|don't (?:say|know|mention)|"
    r"not (?:mentioned|specified|stated|provided|available) in|no information|cannot (?:answer|find|determine)|"
    r"can't (?:answer|find|determine)|unable to (?:answer|find|determine)|i do not know|not enough information|"
    r"文档(?:中)?(?:没有|未)|没有(?:提到|提及|说明|相关信息|相关内容)|未(?:提及|说明|提到)|无法(?:回答|确定|找到)|不知道)",
    re.IGNORECASE)

# (relation, args) facts read from the answer; used for gold-fact conflicts when a rule base is loaded
FactReader = Callable[[str], list[tuple[str, tuple]]]


@dataclass
class Reason:
    type: str        # forbidden | gold_conflict | unsupported | answered_unanswerable
    value: str       # the answer span (or forbidden text) at fault
    detail: str      # why, in words


@dataclass
class AnswerScore:
    abstained: bool
    hallucinated: bool
    reasons: list[Reason] = field(default_factory=list)
    gold_hits: int = 0
    gold_total: int = 0
    correct: bool | None = None               # every gold object stated (None: no gold facts)
    correct_abstention: bool | None = None    # only for unanswerable items

    def to_dict(self) -> dict:
        return asdict(self)


def normalise_text(text: str) -> str:
    """NFKC, casefold, collapse whitespace and underscores: for text (non-value) comparisons."""
    t = unicodedata.normalize("NFKC", text).casefold().replace("_", " ")
    return re.sub(r"\s+", " ", t).strip()


def contains_text(haystack: str, needle: str) -> bool:
    """Normalised containment; Latin needles must sit on word boundaries ("20" is not in "120"), of which a
    Chinese character is one ("HG9级" states HG9)."""
    h, n = normalise_text(haystack), normalise_text(needle)
    if not n:
        return False
    if re.search(r"[\u3400-\u9fff]", n):
        return n in h
    return re.search(rf"(?<![^\W\u3400-\u9fff]){re.escape(n)}(?![^\W\u3400-\u9fff])", h) is not None


def is_abstention(answer: str) -> bool:
    return not answer.strip() or ABSTAIN_PATTERNS.search(answer) is not None


def _value_present(values: list[ValueMention], wanted: list[ValueMention]) -> bool:
    return any(values_equal(v, w) for v in values for w in wanted)


def score_answer(item: SystemItem, answer: str, *, abstained: bool, support_texts: list[str],
                 read_facts: FactReader | None = None) -> AnswerScore:
    """Hallucination, accuracy and abstention of one answer, judged only by the gold annotations.

    support_texts: the text of the item's `support` documents. read_facts: optional (relation, args)
    reader for the answer (the rule base's extraction), used only to find gold-fact conflicts.
    """
    clean = strip_citations(answer)
    values = find_values(clean)
    reasons: list[Reason] = []

    for bad in map(str, item.forbidden):   # text already (the dataset validator); str() says so to mypy
        bad_values = find_values(bad)
        if bad_values and _value_present(values, bad_values):
            hit = next(v.text for v in values if any(values_equal(v, w) for w in bad_values))
            reasons.append(Reason("forbidden", hit, f"states the forbidden value {bad!r}"))
        elif not bad_values and contains_text(clean, bad):
            reasons.append(Reason("forbidden", bad, f"states the forbidden text {bad!r}"))

    gold_objects = [(g, find_values(str(g.object))) for g in item.gold_facts]
    all_gold_values = [v for _, gv in gold_objects for v in gv]
    hits = 0
    for gold, gvals in gold_objects:
        present = _value_present(values, gvals) if gvals else contains_text(clean, str(gold.object))
        hits += present
        if present or not gvals:
            continue
        # The answer gives a value of the gold value's dimension that is no gold value: a conflict.
        rivals = [v for v in values if any(same_dimension(v, g) for g in gvals)
                  and not any(values_equal(v, g) for g in all_gold_values)]
        if rivals:
            reasons.append(Reason("gold_conflict", rivals[0].text,
                                  f"gold {gold.relation}({gold.subject}) = {gold.object!r}, answer says {rivals[0].text!r}"))
    if read_facts is not None and not abstained:
        reasons += _fact_conflicts(item, read_facts(answer))

    if not abstained:
        # Grounded: the support documents, the gold annotation itself (computed answers such as a sum
        # appear in no document), and the question unless its premise is the false part.
        grounding = [v for t in support_texts for v in find_values(t)] + all_gold_values
        grounding += find_values(item.gold_answer or "")
        if item.kind != "false_premise":
            grounding += find_values(item.question)
        for v in values:
            if not any(values_compatible(v, s) for s in grounding):
                where = "the support documents" if item.support else "any document (no support listed)"
                reasons.append(Reason("unsupported", v.text, f"{v.kind} {v.text!r} appears in none of {where}"))
        if item.unanswerable:
            reasons.append(Reason("answered_unanswerable", clean.strip()[:80],
                                  "answered a question the documents cannot answer"))

    # de-duplicate identical reasons (a value can be forbidden and conflicting at once: keep both types)
    uniq = list({(r.type, r.value): r for r in reasons}.values())
    total = len(item.gold_facts)
    return AnswerScore(
        abstained=abstained,
        hallucinated=bool(uniq),
        reasons=uniq,
        gold_hits=hits,
        gold_total=total,
        correct=None if total == 0 else (hits == total and not abstained),
        correct_abstention=abstained if item.unanswerable else None,
    )


def _same_object(said: object, gold: str) -> bool | None:
    """Is the extracted object the gold object? None when the two cannot be compared."""
    if isinstance(said, str):
        svals, gvals = find_values(said), find_values(gold)
        if svals and gvals:
            return _value_present(svals, gvals)
        return normalise_text(said) == normalise_text(gold)
    try:
        from symbolic.values import parse_value
        return said == parse_value(gold)
    except Exception:  # noqa: BLE001 - no symbolic reading of the gold value: not comparable
        return None


def _fact_conflicts(item: SystemItem, facts: list[tuple[str, tuple]]) -> list[Reason]:
    out = []
    for gold in item.gold_facts:
        for relation, args in facts:
            if relation != gold.relation or len(args) < 2:
                continue
            if normalise_text(str(args[0])) != normalise_text(gold.subject):
                continue
            if _same_object(args[-1], str(gold.object)) is False:
                out.append(Reason("gold_conflict", str(args[-1]),
                                  f"answer states {relation}({gold.subject}) = {args[-1]!s}, gold is {gold.object!r}"))
    return out
