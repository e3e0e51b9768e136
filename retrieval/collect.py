"""The documents an ingest indexes: every file of the KB, or (an ingest of named paths) the files under those
paths read again and every other document kept as the previous index version has it."""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from .documents import LoadLimits, load_document, scan_kb
from .errors import DocumentError, PathRefusedError
from .records import Document
from .snapshot import Snapshot

log = logging.getLogger(__name__)
# (phase, done, total): "reading" files, "embedding" chunks, "writing" the new version
Progress = Callable[[str, int, int], None]


def normalize_paths(paths: Sequence[str] | None) -> list[str] | None:
    """KB-relative posix paths, '.' for the whole KB; None (or any '.') means the whole KB."""
    if paths is None:
        return None
    out = []
    for p in paths:
        rel = Path(str(p).strip().replace("\\", "/"))
        if rel.is_absolute() or ".." in rel.parts:
            raise PathRefusedError(f"{p!r}: an ingest path must be relative to the knowledge-base root without '..'")
        posix = rel.as_posix().strip("/")
        if posix in ("", "."):
            return None
        out.append(posix)
    return out


def named(doc_id: str, paths: list[str] | None) -> bool:
    return paths is None or any(doc_id == p or doc_id.startswith(p + "/") for p in paths)


def collect_documents(kb: Path, limits: LoadLimits | None, prev: Snapshot | None, paths: list[str] | None,
                      on_progress: Progress | None = None) -> tuple[list[Document], list[tuple[str, str]]]:
    """(documents in KB order, refused (path, reason)). With ``paths`` and a previous version, only the files
    under them are read from disk; the other documents are the previous version's (their chunks and vectors
    are reused whatever their files say now: the next whole ingest, or index_status, sees those)."""
    if prev is None:
        paths = None          # nothing to keep: a first ingest reads everything
    names, refused = scan_kb(kb, limits)
    todo = [n for n in names if named(n, paths)]
    refused = [r for r in refused if named(r[0], paths)]
    docs: list[Document] = []
    for i, rel in enumerate(todo):
        try:
            docs.append(load_document(kb, rel, limits))
        except DocumentError as exc:
            refused.append((rel, str(exc).removeprefix(f"{rel}: ")))
        if on_progress is not None:
            on_progress("reading", i + 1, len(todo))
    if paths is not None and prev is not None:
        # kept as indexed; what the whole KB derives (supersession, the register) is worked out again
        docs += [Document(replace(m, superseded_by=None, superseded_why=None, listed=None), prev.texts[d])
                 for d, m in prev.docs.items() if not named(d, paths)]
        refused += [(str(p), str(r)) for p, r in prev.manifest.get("skipped", []) if not named(str(p), paths)]
        docs.sort(key=lambda d: d.meta.doc_id)
    return docs, refused
