"""On-disk index layout and atomic versioned writes.

    <index_dir>/CURRENT               name of the live version (replaced atomically with os.replace)
    <index_dir>/versions/v000007/     one complete, immutable index: manifest.json last-written
    <index_dir>/versions/.tmp-*/      a version being written (ignored by readers, removed later)
    <index_dir>/.lock                 flock held by the one ingest allowed at a time

A reader follows CURRENT, which only ever names a fully written and fsynced version, so killing an
ingest at any point leaves the previous index loadable.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator

from .errors import IndexCorruptError, IndexMismatchError, IndexNotFoundError

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
PAUSE_ENV = "VERIRAG_INGEST_PAUSE_AT"   # test hook: "write" (mid-write) or "swap" (before CURRENT moves)
_VERSION_RE = re.compile(r"^v(\d{6,})$")


def default_index_dir(kb_dir: str | Path) -> Path:
    """Where an index lives when none is given: `<KB_DIR>/../.verirag/index` (next to the KB, outside
    it, so the index is never ingested as a document). Two KBs in one parent folder need --index."""
    return Path(kb_dir).resolve().parent / ".verirag" / "index"


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path: Path, data: bytes | str) -> None:
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())


def pause_point(name: str) -> None:
    """Crash-test hook: when VERIRAG_INGEST_PAUSE_AT names this point, announce it and sleep, so a test
    can SIGKILL the process exactly there."""
    if os.environ.get(PAUSE_ENV) == name:
        print(f"verirag: paused at {name}", file=sys.stderr, flush=True)
        time.sleep(float(os.environ.get("VERIRAG_INGEST_PAUSE_S", "600")))


@contextlib.contextmanager
def ingest_lock(index_dir: Path) -> Iterator[None]:
    index_dir.mkdir(parents=True, exist_ok=True)
    with open(index_dir / ".lock", "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # blocks: a second ingest waits for the first
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def current_version_dir(index_dir: Path) -> Path:
    pointer = index_dir / "CURRENT"
    if not pointer.is_file():
        raise IndexNotFoundError(f"no index at {str(index_dir)!r} (run `verirag ingest KB_DIR --index {index_dir}`)")
    name = pointer.read_text(encoding="utf-8").strip()
    if not _VERSION_RE.match(name):
        raise IndexCorruptError(f"{pointer}: does not name a version ({name!r})")
    vdir = index_dir / "versions" / name
    if not (vdir / MANIFEST).is_file():
        raise IndexCorruptError(f"{pointer} names {name}, which has no {MANIFEST}")
    return vdir


def read_manifest(vdir: Path) -> dict:
    try:
        manifest = json.loads((vdir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise IndexCorruptError(f"{vdir / MANIFEST}: unreadable ({exc})") from None
    fv = manifest.get("format_version")
    if fv != FORMAT_VERSION:
        raise IndexMismatchError(f"{vdir}: index format version {fv}, this verirag reads {FORMAT_VERSION}; "
                                 "re-run `verirag ingest --rebuild`")
    return manifest


def _next_version(index_dir: Path) -> str:
    nums = [int(m.group(1)) for p in (index_dir / "versions").iterdir() if (m := _VERSION_RE.match(p.name))]
    return f"v{max(nums, default=0) + 1:06d}"


def commit_version(index_dir: Path, write: Callable[[Path], dict]) -> str:
    """Write a new version with `write(tmp_dir) -> manifest` and make it current atomically.

    Caller holds ingest_lock. Order: files (fsynced by `write`) -> manifest -> dir fsync -> rename to
    its final name -> fsync -> CURRENT.tmp -> os.replace(CURRENT) -> fsync. Crash anywhere before the
    last replace: CURRENT still names the old, complete version.
    """
    versions = index_dir / "versions"
    versions.mkdir(parents=True, exist_ok=True)
    tmp = versions / f".tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    manifest = write(tmp)
    pause_point("write")
    name = _next_version(index_dir)
    manifest = {"format_version": FORMAT_VERSION, "version": name, **manifest}
    write_file(tmp / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False))
    fsync_dir(tmp)
    os.rename(tmp, versions / name)
    fsync_dir(versions)
    pause_point("swap")
    write_file(index_dir / "CURRENT.tmp", name + "\n")
    os.replace(index_dir / "CURRENT.tmp", index_dir / "CURRENT")
    fsync_dir(index_dir)
    return name


def collect_garbage(index_dir: Path, keep: int = 2) -> None:
    """Remove leftovers of killed ingests and all but the newest `keep` versions (caller holds the lock).
    The previous version is kept so a reader that opened it just before the swap can still finish."""
    versions = index_dir / "versions"
    if not versions.is_dir():
        return
    current = (index_dir / "CURRENT").read_text().strip() if (index_dir / "CURRENT").is_file() else None
    done = sorted((p for p in versions.iterdir() if _VERSION_RE.match(p.name)), key=lambda p: p.name)
    old = [p for p in done[:-keep] if p.name != current]
    for p in list(versions.glob(".tmp-*")) + old:
        shutil.rmtree(p, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        (index_dir / "CURRENT.tmp").unlink()
