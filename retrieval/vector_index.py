"""FAISS vector index: exact inner product for small collections, HNSW (or IVF) above a threshold."""
from __future__ import annotations

from dataclasses import dataclass, asdict
from pathlib import Path

import faiss
import numpy as np

from .errors import RetrievalError

KINDS = ("auto", "flat", "hnsw", "ivf")


@dataclass(frozen=True)
class VectorIndexConfig:
    kind: str = "auto"            # auto | flat | hnsw | ivf
    hnsw_threshold: int = 20_000  # auto picks HNSW from this many vectors up; flat search is ~O(N·d)
    hnsw_m: int = 16              # graph degree; with ef_search 128 recall@10 >= 0.95 at 100k (bench/retrieval.py)
    ef_construction: int = 64     # build cost matters: every ingest that changes something rebuilds
    ef_search: int = 128
    ivf_nprobe: int = 24          # IVF: lists scanned per query, of ~2*sqrt(N) lists

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise RetrievalError(f"vector index kind must be one of {KINDS}, got {self.kind!r}")
        if self.ivf_nprobe < 1 or self.hnsw_m < 4 or self.ef_construction < 8 or self.ef_search < 1 or self.hnsw_threshold < 1:
            raise RetrievalError(f"bad HNSW settings: {self}")

    def resolve(self, n: int) -> str:
        if self.kind != "auto":
            return self.kind
        return "hnsw" if n >= self.hnsw_threshold else "flat"

    def to_dict(self) -> dict:
        return asdict(self)


def build(vectors: np.ndarray, config: VectorIndexConfig) -> tuple[faiss.Index, str]:
    """Index rows of `vectors` (L2-normalised float32) for inner-product (= cosine) search."""
    n, d = vectors.shape
    kind = config.resolve(n)
    index: faiss.Index
    if kind == "flat":
        index = faiss.IndexFlatIP(d)
    elif kind == "ivf":
        # IVF trains k-means: far cheaper to build than HNSW (worth it when every ingest rebuilds),
        # slower per query at equal recall. Needs training points: at least ~39 per list.
        nlist = int(min(4096, max(1, min(2 * np.sqrt(n), n // 39))))
        index = ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
        if n:
            ivf.train(np.ascontiguousarray(vectors, dtype=np.float32))
        ivf.nprobe = min(config.ivf_nprobe, nlist)
    else:
        index = hnsw = faiss.IndexHNSWFlat(d, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = config.ef_construction
        hnsw.hnsw.efSearch = config.ef_search
    if n:
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index, kind


def save(index: faiss.Index, path: Path) -> None:
    faiss.write_index(index, str(path))


def load(path: Path, ef_search: int | None = None, nprobe: int | None = None) -> faiss.Index:
    index = faiss.read_index(str(path))
    if ef_search is not None and isinstance(index, faiss.IndexHNSW):
        index.hnsw.efSearch = ef_search
    if nprobe is not None and isinstance(index, faiss.IndexIVF):
        index.nprobe = nprobe
    return index


def search(index: faiss.Index, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids) each [q, k]; ids are -1 where fewer than k vectors exist."""
    k = max(1, min(k, index.ntotal)) if index.ntotal else 1
    if index.ntotal == 0:
        q = queries.shape[0]
        return np.zeros((q, 0), np.float32), np.zeros((q, 0), np.int64)
    return index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
