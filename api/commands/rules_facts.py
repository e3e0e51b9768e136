"""`verirag rules facts RULES --kb KB`: every fact the rule files' patterns read from a knowledge base, with the
pattern and the source line, a count per pattern, and the sentences and table rows that use a relation's words
but yielded no fact (the rule author's coverage report)."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # the pipeline and the KB loader only when the command runs, not at CLI start-up
    from retrieval.records import Passage
    from symbolic import Fact, RuleBase

# the facts read from table rows of a datasheet (no pattern: the row's label names the relation)
PROPERTY_ROWS = "property rows"


def register(sub: argparse._SubParsersAction) -> None:
    f = sub.add_parser("facts", help="list every fact the patterns read from a knowledge base, and what they miss")
    f.add_argument("rules", help="rule folder or .rules file")
    f.add_argument("--kb", required=True, help="the knowledge base folder to read")
    f.add_argument("--relation", action="append", default=[], help="only this relation (repeatable)")
    f.add_argument("--json", action="store_true", help="machine-readable output")
    f.set_defaults(func=run)


def _line(p: Passage, offset: int) -> int:
    """The 1-based line of the document holding the document offset ``offset`` (inside passage ``p``)."""
    return p.start_line + p.text[:max(0, offset - p.start)].count("\n")


def _passage_of(passages: list[Passage], f: Fact) -> Passage | None:
    prov = f.provenance
    return next((p for p in passages if p.doc_id == prov.doc_id and p.start <= (prov.start or 0) < p.end), None)


def _units(text: str) -> list[tuple[int, int]]:
    """The sentences and table rows of a passage, as spans (a row is a line starting with '|')."""
    from pipeline.text.sentences import sentences
    spans: list[tuple[int, int]] = []
    at = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("|"):
            spans.append((at, at + len(line.rstrip("\n"))))
        at += len(line)
    rows = list(spans)
    spans += [(s, e) for s, e in sentences(text) if not any(rs <= s < re for rs, re in rows)]
    return sorted(spans)


def _names_said(rb: RuleBase, wanted: set[str]) -> dict[str, list[set[str]]]:
    """Per relation, the content words of each of its names (label, aliases, identifier)."""
    from pipeline.question.naming import relation_names
    from pipeline.text.terms import content_terms
    out: dict[str, list[set[str]]] = {}
    for name, sig in rb.relations.items():
        if wanted and name not in wanted:
            continue
        out[name] = [w for w in (content_terms(n) for n in relation_names(sig)) if w]
    return out


def read_kb(rb: RuleBase, kb: str | Path, wanted: set[str]) -> dict[str, Any]:
    """What the patterns read from ``kb``: facts (with pattern, document, line, text), counts per pattern, the
    patterns that read nothing, superseded documents, and the sentences and rows left unread."""
    from api.commands.kb_evidence import kb_passages
    from pipeline.evidence.passage_facts import extract_evidence
    from pipeline.text.entities import find_entities
    from pipeline.text.terms import content_terms
    from pipeline.text.values import find_values
    from symbolic.tables import typed_view
    passages = kb_passages(kb)
    readable = [p for p in passages if not p.quarantine]
    facts, _values = extract_evidence(readable, rb)
    rows: list[dict[str, Any]] = []
    read_spans: dict[str, list[tuple[int, int]]] = {}
    for f in facts:
        if wanted and f.relation not in wanted:
            continue
        p = _passage_of(readable, f)
        prov = f.provenance
        start, end = prov.start or 0, prov.end or 0
        read_spans.setdefault(prov.doc_id or "", []).append((start, end))
        rows.append({"fact": str(f), "relation": f.relation, "pattern": prov.rule_id or PROPERTY_ROWS,
                     "doc_id": prov.doc_id, "line": _line(p, start) if p else None,
                     "text": " ".join(p.text[start - p.start:end - p.start].split()) if p else "",
                     "superseded": prov.superseded, "authority": prov.authority, "standing": prov.standing})
    per_pattern = Counter(r["pattern"] for r in rows)
    silent = sorted(cp.pattern.id for cp in rb.patterns if cp.pattern.reads != "answers"
                    and cp.pattern.id not in per_pattern and (not wanted or cp.pattern.atom.relation in wanted))
    names = _names_said(rb, wanted)
    unread = []
    for p in readable:
        taken = read_spans.get(p.doc_id, [])
        for s, e in _units(p.text):
            ds, de = p.start + s, p.start + e
            if any(ts < de and ds < te for ts, te in taken):
                continue
            unit = p.text[s:e]
            # a fact states a value or names an entity: a heading or a header row that only names the
            # relation is no fact missed
            if unit.lstrip().startswith("#") or not (find_values(unit) or find_entities(unit, rb)):
                continue
            terms = content_terms(unit)
            said = sorted(r for r, forms in names.items() if any(w <= terms for w in forms))
            if said:
                unread.append({"doc_id": p.doc_id, "line": _line(p, ds), "relations": said,
                               "text": " ".join(p.text[s:e].split())[:200]})
    warnings = []
    for p in readable:      # a header unit a cell contradicts: the cell is read as written
        for off, unit, cell in typed_view(p.text, p.context_prefix).conflicts:
            warnings.append(f"{p.doc_id}:{_line(p, p.start + off)}: the cell {cell!r} has its own unit; its column "
                            f"header says {unit}: read as the cell writes it")
    superseded = sorted({(p.doc_id, p.superseded_by, p.superseded_why) for p in passages if p.superseded})
    return {"kb": str(kb), "documents": len({p.doc_id for p in passages}), "chunks": len(passages),
            "facts": rows, "per_pattern": dict(per_pattern.most_common()), "patterns_reading_nothing": silent,
            "unread": unread, "warnings": warnings, "superseded": [{"doc_id": d, "superseded_by": by, "why": why}
                                                                        for d, by, why in superseded],
            "quarantined": sorted({p.doc_id for p in passages if p.quarantine})}


# What a fact's standing (pipeline.evidence.passage_facts.standing) means for the answers it may verify
_STANDING_FLAG = {0: " [a note or draft (authority): never verifies a claim on its own]",
                  1: " [not in the KB's register: outranked by a listed document that says otherwise]"}


def run(args: argparse.Namespace) -> int:
    from symbolic import RuleError, load_rulebase

    if not Path(args.kb).is_dir():
        print(f"error: --kb {args.kb}: no such folder", file=sys.stderr)
        return 2
    try:
        rb = load_rulebase(args.rules)
    except RuleError as exc:
        print(exc.render(), file=sys.stderr)
        return 2
    unknown = [r for r in args.relation if r not in rb.relations]
    if unknown:
        print(f"error: unknown relation(s) {', '.join(unknown)}; the rules declare {len(rb.relations)}",
              file=sys.stderr)
        return 2
    out = read_kb(rb, args.kb, set(args.relation))
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    print(f"{out['kb']}: {out['documents']} documents, {out['chunks']} chunks; {len(out['facts'])} facts read")
    for s in out["superseded"]:
        print(f"superseded: {s['doc_id']} (by {s['superseded_by']}; {s['why']}): its facts count at half their CF")
    for d in out["quarantined"]:
        print(f"quarantined (never evidence): {d}")
    for w in out["warnings"]:
        print(f"warning: {w}")
    for r in out["facts"]:
        flag = (" [superseded]" if r["superseded"] else "") + _STANDING_FLAG.get(r["standing"], "")
        print(f"{r['doc_id']}:{r['line']}  {r['fact']}  [{r['pattern']}]{flag}  {r['text'][:120]}")
    print("facts per pattern: " + (", ".join(f"{k} {v}" for k, v in out["per_pattern"].items()) or "none"))
    if out["patterns_reading_nothing"]:
        print("patterns that read nothing: " + ", ".join(out["patterns_reading_nothing"]))
    if out["unread"]:
        print(f"{len(out['unread'])} sentence(s) or row(s) use a relation's words but gave no fact:")
        for u in out["unread"]:
            print(f"  {u['doc_id']}:{u['line']}  {', '.join(u['relations'])}?  {u['text'][:120]}")
    return 0
