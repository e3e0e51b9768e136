"""The default, embedded vector backend: one index version's FAISS index and embedding matrix."""
from __future__ import annotations

import faiss
import numpy as np

from . import vector_index
from .backend import ChunkFilter

EXACT_FILTER_LIMIT = 50_000  # filtered vector search below this many candidates is exact (numpy)


class FaissBackend:
    kind = "faiss"

    def __init__(self, index: faiss.Index, embeddings: np.ndarray):
        self.index = index
        self.embeddings = embeddings

    def search(self, qv: np.ndarray, n: int, mask: np.ndarray | None,
               where: ChunkFilter) -> tuple[np.ndarray, np.ndarray]:
        """Rows and cosines of the n nearest chunks `mask` allows, best first."""
        total = self.index.ntotal
        if mask is not None and int(mask.sum()) <= EXACT_FILTER_LIMIT:
            rows = np.flatnonzero(mask)
            sims = self.embeddings[rows] @ qv
            top = np.argsort(-sims, kind="stable")[:n]
            return rows[top], sims[top]
        # Over-fetch in proportion to how much the filter removes, then drop what it does not allow.
        k = n if mask is None else min(total, n * max(4, total // max(1, int(mask.sum()))))
        scores, ids = vector_index.search(self.index, qv[None, :], k)
        ids, scores = ids[0], scores[0]
        keep = ids >= 0
        if mask is not None:
            keep &= mask[np.maximum(ids, 0)]
        return ids[keep][:n], scores[keep][:n]
