"""Is an index missing, stale (the KB changed since the last ingest) or fresh? Cheap: hashes only."""
from __future__ import annotations

import hashlib
from pathlib import Path

from .chunking import CHUNKER_VERSION
from .documents import LoadLimits, load_document, scan_kb
from .errors import DocumentError, IndexNotFoundError
from .store import current_version_dir, default_index_dir, read_manifest


def index_status(kb_dir: str | Path, index_dir: str | Path | None = None,
                 limits: LoadLimits | None = None) -> str:
    """'missing' (no index yet), 'stale' (a file was added, changed or deleted, or the index was
    chunked by another chunker version) or 'fresh'.

    The pipeline calls ingest() when this is not 'fresh'. Hashes every candidate file (no embedding).
    """
    if not Path(kb_dir).is_dir():
        raise DocumentError(f"knowledge base {str(kb_dir)!r} is not a directory")
    kb = Path(kb_dir).resolve()
    idx = Path(index_dir) if index_dir is not None else default_index_dir(kb)
    try:
        manifest = read_manifest(current_version_dir(idx))
    except IndexNotFoundError:
        return "missing"
    if manifest.get("chunker_version") != CHUNKER_VERSION:
        return "stale"  # re-chunk: an old index has no table headers or quarantine flags
    return "fresh" if kb_matches(kb, manifest, limits) else "stale"


def kb_matches(kb: Path, manifest: dict, limits: LoadLimits | None = None) -> bool:
    """True when the KB's files are exactly the ones (by SHA-256) the manifest's index was built from."""
    if manifest.get("kb_root") != str(kb):
        return False
    known: dict[str, str] = manifest.get("documents", {})
    skipped = {path for path, _ in manifest.get("skipped", [])}
    names, refused = scan_kb(kb, limits)
    if {p for p, _ in refused} - skipped:
        return False
    for rel in names:
        if rel in skipped:
            try:  # a file refused last time that loads now has been fixed
                load_document(kb, rel, limits)
                return False
            except DocumentError:
                continue
        sha = known.get(rel)
        if sha is None or hashlib.sha256((kb / rel).read_bytes()).hexdigest() != sha:
            return False
    return not set(known) - set(names)


def changed_documents(kb_dir: str | Path, index_dir: str | Path | None = None,
                      limits: LoadLimits | None = None) -> list[str] | None:
    """The KB files an ingest would read again: added, changed (by SHA-256), removed, or once refused and now
    loadable; every file when the index was chunked by another chunker version. None: no index yet."""
    kb = Path(kb_dir).resolve()
    idx = Path(index_dir) if index_dir is not None else default_index_dir(kb)
    try:
        manifest = read_manifest(current_version_dir(idx))
    except IndexNotFoundError:
        return None
    names, refused = scan_kb(kb, limits)
    if manifest.get("chunker_version") != CHUNKER_VERSION or manifest.get("kb_root") != str(kb):
        return names
    known: dict[str, str] = manifest.get("documents", {})
    skipped = {path for path, _ in manifest.get("skipped", [])}
    out = sorted({p for p, _ in refused} - skipped)
    for rel in names:
        if rel in skipped:
            try:
                load_document(kb, rel, limits)
                out.append(rel)
            except DocumentError:
                pass
        elif known.get(rel) != hashlib.sha256((kb / rel).read_bytes()).hexdigest():
            out.append(rel)
    return sorted(set(out) | (set(known) - set(names)))
