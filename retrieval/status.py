"""Is an index missing, stale (the KB changed since the last ingest) or fresh? Cheap: hashes only."""
from __future__ import annotations

import hashlib
from pathlib import Path

from .documents import LoadLimits, load_document, scan_kb
from .errors import DocumentError, IndexNotFoundError
from .ingest import default_index_dir
from .store import current_version_dir, read_manifest


def index_status(kb_dir: str | Path, index_dir: str | Path | None = None,
                 limits: LoadLimits | None = None) -> str:
    """'missing' (no index yet), 'stale' (a file was added, changed or deleted) or 'fresh'.

    The pipeline calls ingest() when this is not 'fresh'. Hashes every candidate file (no embedding).
    """
    kb = Path(kb_dir).resolve()
    idx = Path(index_dir) if index_dir is not None else default_index_dir(kb)
    try:
        manifest = read_manifest(current_version_dir(idx))
    except IndexNotFoundError:
        return "missing"
    if manifest.get("kb_root") != str(kb):
        return "stale"
    known: dict[str, str] = manifest.get("documents", {})
    skipped = {path for path, _ in manifest.get("skipped", [])}
    names, refused = scan_kb(kb, limits)
    if {p for p, _ in refused} - skipped:
        return "stale"
    for rel in names:
        if rel in skipped:
            try:  # a file refused last time that loads now has been fixed
                load_document(kb, rel, limits)
                return "stale"
            except DocumentError:
                continue
        sha = known.get(rel)
        if sha is None or hashlib.sha256((kb / rel).read_bytes()).hexdigest() != sha:
            return "stale"
    return "stale" if set(known) - set(names) else "fresh"
