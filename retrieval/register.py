"""The knowledge base's own register: which documents it lists as the ones that count.

A document whose front matter says ``authority: index`` (or ``register``) is a register: a document index,
a list of the organisation's current documents. Where a KB has one, every document it names (by document
id, file name, a link to it, or its title) is ``listed``, and any other is ``listed: False``: a file someone
added that the KB's owners never registered. Its statements still count where nothing better speaks, but a
listed document's fact always wins over an unlisted one's (pipeline.evidence.kb_facts ranks evidence by it), and an
unlisted document cannot supersede a listed one. A KB without a register has every document ``listed:
None``: nothing is ranked by it.
"""
from __future__ import annotations

import posixpath
import re
from pathlib import PurePosixPath

from .records import Document, DocumentMeta

REGISTER_AUTHORITIES = frozenset({"index", "register", "registry", "document index", "document register"})
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|href\s*=\s*[\"']([^\"']+)[\"']", re.I)


def is_register(meta: DocumentMeta) -> bool:
    return (meta.authority or "").strip().lower() in REGISTER_AUTHORITIES


def _linked(register: Document) -> set[str]:
    """The document ids a register's links point to (relative to its own folder, or to the KB root)."""
    here = posixpath.dirname(register.meta.doc_id)
    out: set[str] = set()
    for m in _LINK.finditer(register.text):
        target = (m.group(1) or m.group(2) or "").split("#", 1)[0].split("?", 1)[0]
        if not target or "://" in target or target.startswith("mailto:"):
            continue
        for base in (here, ""):
            out.add(posixpath.normpath(posixpath.join(base, target.lstrip("/"))).removeprefix("./"))
    return out


def _named(meta: DocumentMeta, text: str, unique_names: set[str]) -> bool:
    """Whether ``text`` names the document: its id, its file name (when no other document has it), or its
    title (8 characters or more, so a word is not a title)."""
    path = PurePosixPath(meta.doc_id)
    names = [meta.doc_id] + ([path.name] if path.name in unique_names else [])
    if any(re.search(rf"(?<![\w/.-]){re.escape(n.casefold())}(?![\w-])", text) for n in names):
        return True
    return bool(meta.title and len(meta.title) >= 8 and meta.title.casefold() in text)


def mark_listed(docs: list[Document]) -> list[str]:
    """Set each document's ``listed`` from the KB's registers (None for all when there is none); returns the
    ids of the documents no register lists."""
    registers = [d for d in docs if is_register(d.meta)]
    register_ids = {r.meta.doc_id for r in registers}
    for d in docs:
        d.meta.listed = (d.meta.doc_id in register_ids) if registers else None
    if not registers:
        return []
    names = [PurePosixPath(d.meta.doc_id).name for d in docs]
    unique = {n for n in names if names.count(n) == 1}
    texts = [r.text.casefold() for r in registers]
    links = set().union(*(_linked(r) for r in registers))
    unlisted = []
    for d in docs:
        if d.meta.doc_id in register_ids:
            continue
        d.meta.listed = d.meta.doc_id in links or any(_named(d.meta, t, unique) for t in texts)
        if not d.meta.listed:
            unlisted.append(d.meta.doc_id)
    return unlisted
