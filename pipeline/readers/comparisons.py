"""Comparisons a question states ("Why does the van carry more than the truck?", a Chinese "why is Hangzhou's
service-road limit higher than the UK stations'?"): the two goals of one relation it compares and which it says
is the greater. Where the rules prove both and the values say the other way, the premise is wrong, and the
answer says both values (issue 47, class 4). The words are each language's (lang/<code>/readers.toml
compared_more, compared_less, and the word that introduces the other side: compared_after, compared_before); a
yes/no question ("Is the van's payload higher …?") asserts nothing."""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lang import LANGUAGES, Lexicon
from pipeline.question.focus import Goal, QuestionFocus
from symbolic.terms import EvalError, compare


def _comparisons() -> list[re.Pattern]:
    """Per language, a comparison as it is worded (lang/<code>/readers.toml): the comparative and then the word
    that introduces the other side ("more than <Y>"), or that word, the other side and then the comparative
    (the Chinese order, "<word> <Y> … <comparative>": its match holds the other side as the group ``other``)."""
    out = []
    for code in LANGUAGES:
        lex = Lexicon.load(code)
        edge, gap = (r"\b", r"\s+") if code == "en" else ("", r"\s*")    # English words stand apart; Chinese not
        more = "|".join(sorted(lex.words("readers.compared_more"), key=len, reverse=True))
        less = "|".join(sorted(lex.words("readers.compared_less"), key=len, reverse=True))
        compared = rf"{edge}(?:(?P<more>{more})|(?P<less>{less}))"
        if after := "|".join(lex.words("readers.compared_after")):
            out.append(re.compile(rf"{compared}{gap}(?:{after}){edge}", re.IGNORECASE))
        if before := "|".join(lex.words("readers.compared_before")):
            # the other side runs to the comparative within its clause
            out.append(re.compile(rf"(?:{before})(?P<other>[^，,。？?；;]{{1,30}}?){compared}", re.IGNORECASE))
    return out


_COMPARISONS = _comparisons()


@dataclass(frozen=True)
class Comparison:
    """The question says ``greater``'s value is above ``lesser``'s (both goals of one relation)."""
    greater: Goal
    lesser: Goal
    said: str         # the comparison as the question words it ("higher than")


def stated_comparison(focus: QuestionFocus) -> Comparison | None:
    """The comparison ``focus.question`` states between two of its goals, or None: two goals of one relation whose
    arguments differ in one place, an entity named before the comparison and one on its other side."""
    q = focus.question
    m = next((found for rx in _COMPARISONS if (found := rx.search(q))), None)
    if m is None:
        return None
    pivot = m.start("other") if "other" in m.re.groupindex else m.end()    # where the other side begins
    before = {x.entity_id for x in focus.entities if x.end <= m.start()}
    after = {x.entity_id for x in focus.entities if x.start >= pivot}
    for i, a in enumerate(focus.goals):
        for b in focus.goals[i + 1:]:
            if a.relation != b.relation or len(a.args) != len(b.args):
                continue
            differ = [k for k, (x, y) in enumerate(zip(a.args, b.args)) if x != y]
            if len(differ) != 1:
                continue
            k = differ[0]
            left, right = (a, b) if a.args[k] in before and b.args[k] in after else \
                (b, a) if b.args[k] in before and a.args[k] in after else (None, None)
            if left is None or right is None:
                continue
            greater, lesser = (left, right) if m.group("more") else (right, left)
            return Comparison(greater, lesser, m.group(0))
    return None


def contradicted(comparison: Comparison, greater_value: object, lesser_value: object) -> bool:
    """Whether the proved values say the comparison is wrong: the one said to be greater is not."""
    try:
        return not compare(">", greater_value, lesser_value)
    except (EvalError, TypeError, ValueError):
        return False      # values of kinds that do not compare say nothing
