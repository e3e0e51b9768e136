"""LoadCache: what is slow to rebuild from a model file (its tokenizer, its dequantized weights), on disk.

Lives in ``<cache_root>/load/<key>/`` (neural.model_registry.cache_root: $VERIRAG_CACHE_DIR, else
$XDG_CACHE_HOME/verirag). The key hashes the file's resolved path, size, mtime and first and last 64 KiB, so
a replaced or edited model file misses the cache instead of reading stale weights. Each entry is one file
written to a temporary name in the same folder and renamed into place: two processes starting at once both
build and the later rename wins with identical content; a crash or a full disk leaves no entry, never half of
one. An entry that fails to parse is reported, deleted and rebuilt; a folder that cannot be written only
costs the rebuild next time (one warning). Weights are checked structurally (safetensors refuses a file its
header does not exactly cover; names and shapes are checked by the model), not by a checksum: hashing 2 GB
on every start would cost more than the cache saves on a small model.

Each entry folder records its model file (``source.json``); writing an entry removes the folders whose model
file is gone or has changed, which no key can reach again (a reinstall moves or re-dates the file: without
this, each one would leave hundreds of MB behind).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Callable, TypeVar

import torch
from safetensors import SafetensorError


SOURCE_ENTRY = "source.json"
CACHE_FORMAT = 1  # bump when what is written changes meaning (loader fixes included): old entries then miss
_EDGE = 1 << 16
_Entry = TypeVar("_Entry")


def model_file_key(path: Path) -> str:
    """``<stem>-<hash>``: identity of the model file (path, size, mtime) plus its first and last 64 KiB."""
    path = path.resolve()
    st = path.stat()
    h = hashlib.sha256(f"{CACHE_FORMAT}|{path}|{st.st_size}|{st.st_mtime_ns}".encode())
    with open(path, "rb") as f:
        h.update(f.read(_EDGE))
        f.seek(max(0, st.st_size - _EDGE))
        h.update(f.read(_EDGE))
    return f"{path.stem[:48]}-{h.hexdigest()[:20]}"


def _identity(path: Path) -> dict:
    st = path.stat()
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def prune_stale_entries(root: Path, keep: Path | None = None) -> list[Path]:
    """Remove the entry folders under ``root`` whose recorded model file is gone or changed; folders that
    record none (older verirag, other caches) are left alone. Returns what was removed."""
    removed = []
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        if entry == keep or not (entry / SOURCE_ENTRY).is_file():
            continue
        try:
            recorded = json.loads((entry / SOURCE_ENTRY).read_text(encoding="utf-8"))
            source = Path(recorded["path"])
            stale = not source.is_file() or _identity(source) != recorded
        except (OSError, ValueError, KeyError, TypeError):
            stale = False  # unreadable: not ours to judge
        if stale:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def load_cache_root() -> Path:
    from neural.model_registry import cache_root

    return cache_root() / "load"


class CacheDir:
    """A folder of cache entries. ``enabled`` turns False (with one warning) once a write fails."""

    def __init__(self, path: Path) -> None:
        self.dir = Path(path)
        self.enabled = True

    # ------------------------------------------------------------------ entries
    def read(self, name: str, parse: Callable[[Path], _Entry]) -> _Entry | None:
        """``parse(path)`` of entry ``name``; None when absent. A parse error is reported, the entry
        deleted (the caller rebuilds it), and None returned."""
        path = self.dir / name
        if not path.is_file():
            return None
        try:
            return parse(path)
        except Exception as exc:  # noqa: BLE001 - any failure to read back a cache entry means: rebuild it
            warnings.warn(f"load cache: {path} is corrupt ({type(exc).__name__}: {exc}); rebuilding it",
                          stacklevel=2)
            try:
                path.unlink()
            except OSError:
                pass
            return None

    def write(self, name: str, produce: Callable[[Path], object]) -> bool:
        """``produce(tmp_path)`` writes the entry; it appears under ``name`` only once complete."""
        if not self.enabled:
            return False
        tmp = None
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.dir)
            os.close(fd)
            produce(Path(tmp))
            os.replace(tmp, self.dir / name)
            tmp = None
            return True
        except (OSError, SafetensorError) as exc:  # read-only folder, full disk, quota...
            self.enabled = False
            warnings.warn(f"load cache: cannot write to {self.dir} ({exc}); running without a load cache "
                          "(the next start rebuilds what it would have kept)", stacklevel=2)
            return False
        finally:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)

    # ------------------------------------------------------------------ typed helpers
    def read_json(self, name: str) -> dict | None:
        def parse(path: Path) -> dict:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("cache_format") != CACHE_FORMAT:
                raise ValueError("not an entry of this cache format")
            return data

        return self.read(name, parse)

    def write_json(self, name: str, data: dict) -> bool:
        text = json.dumps({**data, "cache_format": CACHE_FORMAT})
        return self.write(name, lambda p: p.write_text(text, encoding="utf-8"))

    def read_tensors(self, name: str) -> tuple[dict[str, torch.Tensor], dict[str, str]] | None:
        """(tensors, string metadata) of a safetensors entry."""
        def parse(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
            from safetensors import safe_open

            with safe_open(str(path), framework="pt") as f:
                meta = f.metadata() or {}
                if meta.get("cache_format") != str(CACHE_FORMAT):
                    raise ValueError("not an entry of this cache format")
                return {k: f.get_tensor(k) for k in f.keys()}, meta

        return self.read(name, parse)

    def write_tensors(self, name: str, tensors: dict[str, torch.Tensor], meta: dict[str, str]) -> bool:
        from safetensors.torch import save_file

        def produce(path: Path) -> None:
            save_file(tensors, str(path), metadata={**meta, "cache_format": str(CACHE_FORMAT)})
            with open(path, "rb+") as f:  # on disk before the rename makes it visible
                os.fsync(f.fileno())

        return self.write(name, produce)


class LoadCache(CacheDir):
    """The cache folder of one model file: ``<cache_root>/load/<model_file_key>``."""

    def __init__(self, model_path: str | Path, root: Path | None = None) -> None:
        self.model_path = Path(model_path).resolve()
        self.root = Path(root) if root is not None else load_cache_root()
        super().__init__(self.root / model_file_key(self.model_path))

    def write(self, name: str, produce: Callable[[Path], object]) -> bool:
        """As CacheDir.write; the first entry also records the model file and prunes stale folders."""
        written = super().write(name, produce)
        if written and not (self.dir / SOURCE_ENTRY).is_file():
            text = json.dumps(_identity(self.model_path))
            if super().write(SOURCE_ENTRY, lambda p: p.write_text(text, encoding="utf-8")):
                prune_stale_entries(self.root, keep=self.dir)
        return written
