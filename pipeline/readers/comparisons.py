"""Comparisons a question states ("Why does the van carry more than the truck?", a Chinese "why is Hangzhou's
service-road limit higher than the UK stations'?"): the two goals of one relation it compares and which it says
is the greater. Where the rules prove both and the values say the other way, the premise is wrong, and the
answer says both values (issue 47, class 4). English words before "than", Chinese words after 比 (lang/<code>/
readers.toml compared_more, compared_less); a yes/no question ("Is the van's payload higher …?") asserts nothing."""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lang import Lexicon
from pipeline.question.focus import Goal, QuestionFocus
from symbolic.terms import EvalError, compare


def _words(code: str, key: str) -> str:
    return "|".join(sorted(Lexicon.load(code).words(f"readers.{key}"), key=len, reverse=True))


# "<X> … more than <Y>": the comparative right before "than"
_EN = re.compile(rf"\b(?:(?P<more>{_words('en', 'compared_more')})|(?P<less>{_words('en', 'compared_less')}))\s+than\b",
                 re.IGNORECASE)
# "<X> … 比 <Y> … 高": the comparative after 比 in its clause
_ZH = re.compile(rf"比(?P<other>[^，,。？?；;]{{1,30}}?)(?:(?P<more>{_words('zh', 'compared_more')})|"
                 rf"(?P<less>{_words('zh', 'compared_less')}))")


@dataclass(frozen=True)
class Comparison:
    """The question says ``greater``'s value is above ``lesser``'s (both goals of one relation)."""
    greater: Goal
    lesser: Goal
    said: str         # the comparison as the question words it ("higher than")


def stated_comparison(focus: QuestionFocus) -> Comparison | None:
    """The comparison ``focus.question`` states between two of its goals, or None: two goals of one relation whose
    arguments differ in one place, an entity named before the comparison's pivot ("than", 比) and one after it."""
    q = focus.question
    m = _EN.search(q) or _ZH.search(q)
    if m is None:
        return None
    pivot = m.end() if m.re is _EN else m.start() + 1     # after "than"; after 比
    before = {x.entity_id for x in focus.entities if x.end <= (m.start() if m.re is _EN else m.start())}
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
