"""Provenance in rules: the built-in document relations (status, effective date, authority) and the facts
they hold for a set of evidence, and which evidence takes precedence when evidence disagrees."""
from __future__ import annotations

from typing import Any

from . import model as m
from .errors import Location
from .facts import Fact, Provenance
from .values import Date, parse_value

# relation -> (parameter names and types); declared in every rule base unless a rule file declares them
DOCUMENT_RELATIONS = {
    "document_status": (("document", "text"), ("status", "text")),        # "current" | "superseded"
    "document_effective": (("document", "text"), ("date", "date")),
    "document_authority": (("document", "text"), ("authority", "text")),  # policy, note, draft, …
}
_BUILTIN = Location("<built-in>", 1, 1)


def with_document_relations(relations: dict[str, m.RelationSig]) -> dict[str, m.RelationSig]:
    """The vocabulary rules are checked against: the rule base's relations plus the document relations
    (a file's own declaration wins). They stay out of ``RuleBase.relations``, which names the domain."""
    out = {name: m.RelationSig(name, [m.Param(p, t, None, _BUILTIN) for p, t in params],
                               name.replace("_", " "), [], False, _BUILTIN)
           for name, params in DOCUMENT_RELATIONS.items()}
    return {**out, **relations}


def document_facts(evidence: list[Fact]) -> list[Fact]:
    """What the evidence's provenance says about its documents, as facts rules can match."""
    out: list[Fact] = []
    seen: set[str] = set()
    for f in evidence:
        p = f.provenance
        if not p.doc_id or p.doc_id in seen or p.source != "document":
            continue
        seen.add(p.doc_id)
        src = Provenance("document", p.doc_id, superseded=False)   # a document's status is no claim to halve
        out.append(Fact("document_status", (p.doc_id, "superseded" if p.superseded else "current"), 1.0, src))
        if p.effective_date:
            try:
                day = parse_value(str(p.effective_date))
            except ValueError:
                day = None
            if isinstance(day, Date):
                out.append(Fact("document_effective", (p.doc_id, day), 1.0, src))
        if p.authority:
            out.append(Fact("document_authority", (p.doc_id, str(p.authority).lower()), 1.0, src))
    return out


def _effective(f: Fact) -> Any:
    try:
        d = parse_value(str(f.provenance.effective_date)) if f.provenance.effective_date else None
    except ValueError:
        return None
    return d.value if isinstance(d, Date) else None


def precedence(match: list[Fact], conflict: list[Fact]) -> tuple[list[Fact], list[Fact], list[str]]:
    """The evidence that counts when evidence about one subject disagrees, and why (for the explanation): the
    highest standing first (a policy over a note or an unlisted document: one never cancels the other), then
    current documents over superseded ones; then, among facts with an effective date, the latest date."""
    notes: list[str] = []
    if match and conflict:
        top = max(f.provenance.standing for f in (*match, *conflict))
        lower = [f for f in (*match, *conflict) if f.provenance.standing < top]
        if lower:
            match = [f for f in match if f.provenance.standing == top]
            conflict = [f for f in conflict if f.provenance.standing == top]
            notes.append("evidence of higher standing wins over "
                         + ", ".join(sorted({f.provenance.doc_id or f.provenance.source for f in lower}))
                         + " (a note or a document the register does not list)")
    both = [*match, *conflict]
    if any(not f.provenance.superseded for f in both) and any(f.provenance.superseded for f in both):
        match = [f for f in match if not f.provenance.superseded]
        conflict = [f for f in conflict if not f.provenance.superseded]
        notes.append("current evidence wins over superseded evidence")
    if match and conflict:
        dates = {id(f): _effective(f) for f in (*match, *conflict)}
        latest = max((d for d in dates.values() if d is not None), default=None)
        older = [f for f in (*match, *conflict) if dates[id(f)] is not None and dates[id(f)] < latest]
        if older:
            match = [f for f in match if f not in older]
            conflict = [f for f in conflict if f not in older]
            notes.append(f"the latest effective date ({latest}) wins over earlier ones")
    return match, conflict, notes
