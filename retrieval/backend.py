"""Where an index's dense vectors live: the backend choice recorded in the manifest, and the filter
every backend applies (doc id, tags, language, superseded, quarantined)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import RetrievalError

BACKENDS = ("faiss", "qdrant")
DEFAULT_COLLECTION = "verirag"
DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class BackendConfig:
    """faiss: vectors in the index folder (embedded, the default). qdrant: vectors in a Qdrant
    collection, on a server (`url`) or embedded in a folder (`path`; None = <index>/qdrant)."""
    kind: str = "faiss"
    url: str | None = None
    path: str | None = None
    collection: str = DEFAULT_COLLECTION
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.kind not in BACKENDS:
            raise RetrievalError(f"index backend must be one of {BACKENDS}, got {self.kind!r}")
        if self.kind == "faiss" and (self.url or self.path):
            raise RetrievalError("--url / --db-path are for a vector database backend (--backend qdrant), "
                                 "not faiss")
        if self.url is not None and self.path is not None:
            raise RetrievalError("give a vector database either a server url or an embedded path, not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise RetrievalError(f"vector database url must start with http:// or https://, got {self.url!r}")
        if not self.collection or not all(c.isalnum() or c in "-_" for c in self.collection):
            raise RetrievalError(f"collection name must be letters, digits, '-' or '_', got {self.collection!r}")
        if not 0 < self.timeout_s <= 600:
            raise RetrievalError(f"vector database timeout must be in (0, 600] seconds, got {self.timeout_s!r}")

    def location(self, index_dir: Path) -> str:
        """What an error message names: the server URL or the embedded storage folder."""
        if self.kind == "faiss":
            return str(index_dir)
        return self.url or str(self.storage_path(index_dir))

    def storage_path(self, index_dir: Path) -> Path:
        return Path(self.path) if self.path else Path(index_dir) / "qdrant"

    def to_manifest(self) -> dict:
        # Never an API key: the manifest is a plain file; keys come from QDRANT_API_KEY at connect time.
        return asdict(self)

    @classmethod
    def from_manifest(cls, manifest: dict) -> "BackendConfig":
        return cls(**manifest["backend"]) if manifest.get("backend") else cls()  # older indexes: faiss


@dataclass(frozen=True)
class ChunkFilter:
    """What a search may return. Lists are lowercased; None = no condition on that field."""
    doc_ids: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None        # any of them
    languages: tuple[str, ...] | None = None   # "zh" also matches "zh-cn"
    exclude_superseded: bool = False
    include_quarantined: bool = False

    @property
    def empty(self) -> bool:
        return (self.doc_ids is None and self.tags is None and self.languages is None
                and not self.exclude_superseded)


def tie_break(rows: np.ndarray, scores: np.ndarray, eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Equal cosines (within float noise: summation order differs between FAISS, numpy and a database)
    in row order: the same vector ranks, so the same fused ranking, whichever backend answered."""
    if len(rows) < 2:
        return rows, scores
    order = np.argsort(-scores, kind="stable")
    rows, scores = rows[order], scores[order]
    group = np.concatenate([[0], np.cumsum(np.diff(scores) < -eps)])  # a new group where the score drops
    order = np.lexsort((rows, group))
    return rows[order], scores[order]



class VectorBackend(Protocol):
    """Dense half of hybrid search. `mask` (rows allowed, or None = all) is what the in-process FAISS
    backend uses; a database applies `where` itself and returns rows of this index version."""
    kind: str

    def search(self, qv: np.ndarray, n: int, mask: np.ndarray | None,
               where: ChunkFilter) -> tuple[np.ndarray, np.ndarray]: ...
