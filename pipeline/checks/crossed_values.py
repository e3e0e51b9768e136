"""Values said of their neighbour's label: a table or sentence that states two values of one kind under two
labels ("top speed (loaded) 1.5 m/s", "top speed (unloaded) 2.0 m/s", in a Chinese manual) grounds neither value
said of the other's label ("the top speed unloaded is 1.5 m/s"), and a table row grounds no value said of another
row's label ("4 business hours" of the Severity 3 row said of Severity 1)."""
from __future__ import annotations

import re
from typing import Sequence, cast

from pipeline.text.script import is_chinese
from pipeline.text.terms import content_terms, says_phrase
from pipeline.text.values import EvidenceValue
from symbolic.values import Quantity, Value


def _same_kind(a: Value, b: Value) -> bool:
    if type(a) is not type(b):
        return False
    return not isinstance(a, Quantity) or a.dimension == cast(Quantity, b).dimension   # b: of a's type


def _neighbours(ev: EvidenceValue, evidence: Sequence[EvidenceValue]) -> list[EvidenceValue]:
    """Values of ``ev``'s kind stated beside it with another label: in its sentence, or in another row of
    a table of its document."""
    row = ev.context.lstrip().startswith("|")
    return [o for o in evidence if o.doc_id == ev.doc_id and o.value != ev.value and _same_kind(o.value, ev.value)
            and (o.context == ev.context or (row and o.context.lstrip().startswith("|")))]


def crossed_by(said_in: str, ev: EvidenceValue, evidence: Sequence[EvidenceValue]) -> EvidenceValue | None:
    """The neighbour whose label the answer's sentence ``said_in`` uses for ``ev``'s value, while it uses none of
    the words that set ``ev``'s own label apart; None when there is none."""
    answer = content_terms(said_in)
    row = content_terms(ev.context)
    for other in _neighbours(ev, evidence):
        if other.context == ev.context:     # one sentence: the words nearest each value label it
            own, theirs = _label_terms(ev), _label_terms(other)
        else:
            own, theirs = row, content_terms(other.context)
        if own - theirs and answer & (theirs - own) and not answer & (own - theirs):
            return other
    return None


def label_of(ev: EvidenceValue) -> str:
    """The words that label ``ev`` in its source, for an explanation."""
    return ev.context.strip().strip("|").strip()


def _label_terms(ev: EvidenceValue) -> set[str]:
    """The words just before a value in its sentence (after the previous value or clause mark)."""
    ctx, at = ev.context, ev.context.find(ev.text)
    if at < 0:
        return content_terms(ctx)
    before = ctx[:at]
    cut = max(before.rfind(ch) for ch in ",，;；、:：")
    return content_terms(before[cut + 1:])


_FIRST_CELL = re.compile(r"^\s*\|?\s*([^|]*?)\s*\|")


def row_label(ev: EvidenceValue) -> str:
    """The first cell of the table row that states ``ev`` ("" outside a table)."""
    m = _FIRST_CELL.match(ev.context) if ev.column is not None else None
    return m.group(1) if m else ""


def _kin(a: str, b: str) -> bool:
    """Two row labels of one family: a shared word ("Severity 1", "Severity 3"), a number each ("AX-200"), or
    for Chinese labels two characters in a row ("first-class city" and "second-class city" share the two
    characters of "class city")."""
    if is_chinese(a) and is_chinese(b):
        return any(a[i:i + 2] in b for i in range(len(a) - 1) if is_chinese(a[i]))
    return bool(set(a.lower().split()) & set(b.lower().split())) or all(re.search(r"\d", x) for x in (a, b))


def other_row_named(said_in: str, ev: EvidenceValue, evidence: Sequence[EvidenceValue]) -> EvidenceValue | None:
    """A value of another row of ``ev``'s table whose label the answer's sentence ``said_in`` names, while it
    does not name ``ev``'s own row; None when there is none."""
    own = row_label(ev)
    if not own or says_phrase(said_in, own):
        return None
    for o in evidence:
        if o.doc_id != ev.doc_id or o.column is None or ev.column is None or o.column.headers != ev.column.headers:
            continue
        label = row_label(o)
        if label and label.lower() != own.lower() and _kin(label, own) and says_phrase(said_in, label) \
                and not says_phrase(label, own) and not says_phrase(own, label):
            return o
    return None
