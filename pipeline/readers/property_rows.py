"""Facts a datasheet's property table states: in a document whose title names one entity ("LX-500 Pallet Lifting
Robot — Product Datasheet"), a two-cell row "| Runtime per charge | up to 8 hours |" whose label names one
relation of that entity's type, by the rule vocabulary's names, states that relation of the entity. No pattern
need be written for each row: the rows' labels are the relations' names."""
from __future__ import annotations

from typing import Iterator

from pipeline.readers.focus import fits
from pipeline.readers.vocabulary import MIN_CLAUSE_SCORE, best_named
from pipeline.seams import PassageLike
from pipeline.text.entities import find_entities
from pipeline.text.tables import is_separator
from pipeline.text.terms import content_terms
from pipeline.text.values import find_values
from symbolic import Fact, RuleBase
from symbolic.model import VALUE_TYPES, Entity

# A reading from names alone, with no pattern written for it (as vocabulary_reading's claims).
PROPERTY_ROW_CF = 0.9


def document_subject(passage: PassageLike, rulebase: RuleBase) -> Entity | None:
    """The one entity the passage's document title names, else None."""
    title = getattr(passage, "title", None) or ""
    ids = {x.entity_id for x in find_entities(title, rulebase)} if title else set()
    return rulebase.entities.get(next(iter(ids))) if len(ids) == 1 else None


def _rows(text: str) -> Iterator[tuple[int, str, str, int]]:
    """(line start, label cell, value cell, value cell's end) of each two-cell table row that is no header (the
    line before a |---| separator)."""
    lines = text.splitlines(keepends=True)
    pos = 0
    for i, line in enumerate(lines):
        start, pos = pos, pos + len(line)
        body = line.strip()
        if not body.startswith("|") or is_separator(body) or (i + 1 < len(lines) and is_separator(lines[i + 1].strip())):
            continue
        cells = body.strip("|").split("|")
        if len(cells) != 2:
            continue
        label, value = cells
        value_start = start + line.index("|") + 1 + len(label) + 1
        yield start, label.strip(), value, value_start + len(value)


def property_row_facts(passage: PassageLike, rulebase: RuleBase) -> list[tuple[Fact, int, int]]:
    """(fact, start, end in the passage) for each row of the passage's property tables that states one value
    of one relation of its document's subject: the relation whose name the row label says best (by
    MIN_CLAUSE_SCORE at least, no tie), among those of the subject's type that the value fits."""
    subject = document_subject(passage, rulebase)
    if subject is None:
        return []
    sigs = [sig for sig in rulebase.relations.values() if sig.arity == 2 and sig.params[0].type == subject.type
            and sig.params[1].type in VALUE_TYPES]
    out: list[tuple[Fact, int, int]] = []
    text = passage.text
    for line_start, label, value_cell, value_end in _rows(text):
        values = find_values(value_cell)
        if len(values) != 1 or not label or find_entities(label, rulebase):
            continue                  # several values, or a row about another entity: not one property
        value = values[0][0]
        sig = best_named([s for s in sigs if fits(s, value)], frozenset(content_terms(label)), MIN_CLAUSE_SCORE,
                         rulebase=rulebase)
        if sig is not None:
            out.append((Fact(sig.name, (subject.id, value), PROPERTY_ROW_CF), line_start, value_end))
    return out
