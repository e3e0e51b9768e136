"""Which document supersedes which: front matter (`supersedes:` of the newer, `superseded_by:` of the older) and a
document's own banner."""
from __future__ import annotations

import logging
import re
from pathlib import PurePosixPath
from typing import cast

from .records import BANNER_UNRESOLVED, Document, DocumentMeta, IngestReport

log = logging.getLogger(__name__)

BANNER_WINDOW = 600  # chars after the front matter where a "superseded" banner is looked for

# A banner speaks about its own document, so what precedes the keyword in its sentence must be empty
# (after markup and a label such as "Note:") or "this policy is / has been"; "The 2023 policy is
# superseded by this edition", found in the *new* document, is not a banner of that document.
_EN_KEY = re.compile(r"\b(?:(?:superseded|replaced|repealed)\s+by\b(?P<by>)|superseded|withdrawn|repealed"
                     r"|no\s+longer\s+in\s+(?:force|effect))", re.I)
_EN_SUBJECT = re.compile(r"(?:(?:this|the\s+present)(?:\s+[\w-]+){1,3}?\s+(?:is|has\s+been|was|stands)"
                         r"(?:\s+(?:now|hereby))?)?", re.I)
_LABEL = re.compile(r"[\s>*_#\[\]!|(【〔（)-]*(?:(?:note|notice|warning|important|status|attention|注意|提示|状态|说明)"
                    r"\s*[:：]?[\s*_】〕）)]*)?", re.I)
_ZH_KEY = re.compile(r"已被(?P<ref>[^。；\n]{1,80}?)(?:所)?(?:取代|替代|代替)|已?废止|已?作废")
_ZH_SUBJECT = re.compile(r"(?:[本此该](?:文件|制度|办法|规定|政策|通知|指南|手册|版本|标准|细则|文档|说明)"
                         r"[^《。；\n]{0,30})?")
# '.' ends a sentence only before whitespace: "travel_2025.md" is one word. A line break ends one too
# (banners are short lines), except inside a '>' quote block, whose lines wrap one paragraph.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？；]|\n(?!>)")


# A line that defines a term: list or quote marks, the term (emphasis allowed), then what separates a term from its
# definition. Group "sep" is that separator: the entries of one glossary share it.
_DEFINITION = re.compile(r"[ \t>*_#|-]*(?:\*\*|__)?[^\W\d][\w ()/-]{0,40}?(?:\*\*|__)?[ \t]*"
                         r"(?P<sep>[:：—–|]|[ \t]-[ \t])")


def _line_at(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, len(text) if end < 0 else end


def _defines_a_term(text: str, pos: int) -> bool:
    """Whether the keyword at ``pos`` is a term a glossary or status list defines ("**Superseded** — a document
    that has been replaced ...", "- Superseded: replaced by a newer version."): its line defines a term, and so
    does another line near it, with the same separator. A banner stands alone; a definition has siblings."""
    start, end = _line_at(text, pos)
    own = _DEFINITION.match(text, start, end)
    if own is None or own.end("sep") <= pos:
        return False
    lines = [_line_at(text, p) for p in range(max(0, start - 400), min(len(text), end + 400))]
    for s, e in sorted(set(lines)):
        if s != start and (m := _DEFINITION.match(text, s, e)) and m.group("sep") == own.group("sep") \
                and text[s:e].strip():
            return True
    return False


def _sentence_start(text: str, pos: int, floor: int) -> int:
    ends = [m.end() for m in _SENTENCE_END.finditer(text, floor, pos)]
    return ends[-1] if ends else floor


def find_banner(text: str, body_start: int) -> tuple[str, str | None] | None:
    """(banner sentence, what it names as the replacement or None) near the top of a document, or None."""
    end = min(len(text), body_start + BANNER_WINDOW)
    for key, subject in ((_EN_KEY, _EN_SUBJECT), (_ZH_KEY, _ZH_SUBJECT)):
        for m in key.finditer(text, body_start, end):
            s = _sentence_start(text, m.start(), body_start)
            prefix = text[s:m.start()]
            label = _LABEL.match(prefix)
            assert label is not None  # every part of _LABEL is optional: it matches any text
            if not subject.fullmatch(prefix[label.end():].strip()) or _defines_a_term(text, m.start()):
                continue
            stop = _SENTENCE_END.search(text, m.end())
            stop_at = stop.start() if stop else len(text)
            sentence = " ".join(text[s:stop.end() if stop else len(text)].replace("\n>", " ").split())
            if key is _ZH_KEY:
                ref = m.group("ref")
            else:
                ref = text[m.end():stop_at].replace("\n>", " ") if m.group("by") is not None else None
            ref = " ".join(ref.split()).strip(" *_:：,，") if ref else None
            # Drop emphasis markup (**, `, _ at a word's edge), not the '_' inside "leave_2025.md".
            return re.sub(r"\*+|`+|(?<!\w)_+|_+(?!\w)", "", sentence).strip(" >#"), ref or None
    return None


def resolve_ref(ref: str, docs: list[DocumentMeta], self_id: str) -> str | None:
    """The KB document a banner names: by doc id, file name, file stem or title; the longest match
    wins (so "Travel Policy (2025 edition)" beats "Travel Policy"). None when nothing matches."""
    low = ref.casefold()
    best: tuple[int, str] | None = None
    for m in docs:
        if m.doc_id == self_id:
            continue
        path = PurePosixPath(m.doc_id)
        names = [m.doc_id, path.name] + ([path.stem] if len(path.stem) >= 6 else [])
        hits = [len(n) for n in names if re.search(rf"(?<![\w/]){re.escape(n.casefold())}(?![\w])", low)]
        if m.title and len(m.title) >= 8 and m.title.casefold() in low:
            hits.append(len(m.title))
        if hits and (best is None or max(hits) > best[0]):
            best = (max(hits), m.doc_id)
    return best[1] if best else None


def link_supersedes(docs: list[Document], report: IngestReport) -> None:
    """Mark superseded documents (`superseded_by`) and list each case in report.superseded.

    Front matter first: a newer version's `supersedes:` (the later effective_date wins a conflict), then a
    document's own `superseded_by:`; then banners: a banner naming a KB document links to it, one naming none (as
    an own `superseded_by:` naming none) marks the document superseded by BANNER_UNRESOLVED.
    """
    by_id = {d.meta.doc_id: d.meta for d in docs}
    how: dict[str, str] = {}
    for m in sorted(by_id.values(), key=lambda m: (m.effective_date or "", m.doc_id)):
        if m.supersedes is None:
            continue
        target = by_id.get(m.supersedes)
        if target is None:
            report.warnings.append(f"{m.doc_id}: supersedes {m.supersedes!r}, which is not in the knowledge base")
        elif target is m:
            report.warnings.append(f"{m.doc_id}: a document cannot supersede itself")
        elif m.listed is False and target.listed:
            report.warnings.append(f"{m.doc_id}: supersedes {m.supersedes!r}, but the knowledge base's register does "
                                   f"not list {m.doc_id} and does list {m.supersedes}: ignored")
        else:
            if target.superseded_by is not None:
                report.warnings.append(f"{m.supersedes}: superseded by both {target.superseded_by} and {m.doc_id}; "
                                       f"{m.doc_id} (later effective_date) wins")
            target.superseded_by = m.doc_id
            how[target.doc_id] = f"front matter of {m.doc_id}"
    metas = list(by_id.values())
    for m in metas:     # a document's own front matter `superseded_by:` (the newer version's `supersedes:` wins)
        if m.declared_superseded_by is None or m.superseded_by is not None:
            continue
        declared = m.declared_superseded_by
        named = declared if declared in by_id and declared != m.doc_id else resolve_ref(declared, metas, m.doc_id)
        m.superseded_by = named or BANNER_UNRESOLVED
        how[m.doc_id] = f"its own front matter: superseded_by {declared!r}"
        if named is None:
            report.warnings.append(f"{m.doc_id}: its front matter's superseded_by names {declared!r}, which matches "
                                   "no document of the knowledge base; marked superseded anyway")
    for m in metas:
        if m.banner is None:
            continue
        named = resolve_ref(m.banner_ref, metas, m.doc_id) if m.banner_ref else None
        if m.superseded_by is None:
            m.superseded_by = named or BANNER_UNRESOLVED
            how[m.doc_id] = f"banner: {m.banner!r}"
            if m.banner_ref and named is None:
                report.warnings.append(f"{m.doc_id}: its banner names {m.banner_ref!r}, which matches no "
                                       "document of the knowledge base; marked superseded anyway")
        elif named is not None and named != m.superseded_by:
            report.warnings.append(f"{m.doc_id}: its banner names {named}, front matter says "
                                   f"{m.superseded_by}; the front matter wins")
    # `how` names superseded documents only: each has its superseded_by
    report.superseded = sorted((d, cast(str, by_id[d].superseded_by), h) for d, h in how.items())
    for d, h in how.items():
        by_id[d].superseded_why = h
    for w in report.warnings:
        log.warning(w)
