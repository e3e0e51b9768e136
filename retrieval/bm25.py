"""Okapi BM25 over chunk token lists, stored as CSR postings in numpy arrays (fast to save and load)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .tokenize import tokenize


@dataclass
class BM25Index:
    vocab: dict[str, int]        # term -> row of the postings matrix
    indptr: np.ndarray           # int64 [V+1]; postings of term t are [indptr[t], indptr[t+1])
    doc_ids: np.ndarray          # int32 [nnz] chunk row ids
    tfs: np.ndarray              # float32 [nnz] term frequencies
    doc_len: np.ndarray          # float32 [N] tokens per chunk
    k1: float = 1.2
    b: float = 0.75

    @property
    def num_docs(self) -> int:
        return int(self.doc_len.shape[0])

    @classmethod
    def build(cls, texts: list[str], k1: float = 1.2, b: float = 0.75) -> "BM25Index":
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[int] = []
        doc_len = np.zeros(len(texts), dtype=np.float32)
        for i, text in enumerate(texts):
            toks = tokenize(text)
            doc_len[i] = len(toks)
            counts: dict[int, int] = {}
            for t in toks:
                tid = vocab.setdefault(t, len(vocab))
                counts[tid] = counts.get(tid, 0) + 1
            rows.extend(counts.keys())
            cols.extend([i] * len(counts))
            vals.extend(counts.values())
        r = np.asarray(rows, dtype=np.int64)
        order = np.argsort(r, kind="stable")  # stable: postings stay sorted by chunk id
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=len(vocab)), out=indptr[1:])
        return cls(vocab, indptr, np.asarray(cols, dtype=np.int32)[order],
                   np.asarray(vals, dtype=np.float32)[order], doc_len, k1, b)

    def _norm(self) -> np.ndarray:
        """k1·(1 − b + b·len/avgdl) per chunk: fixed for an index, so computed once."""
        if getattr(self, "_norm_cache", None) is None:
            avgdl = float(self.doc_len.mean()) or 1.0
            self._norm_cache = (self.k1 * (1 - self.b + self.b * self.doc_len / avgdl)).astype(np.float32)
        return self._norm_cache

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query (0 where no query term occurs)."""
        n = self.num_docs
        out = np.zeros(n, dtype=np.float32)
        if n == 0:
            return out
        norm = self._norm()
        for term in tokenize(query):  # a repeated query term counts again, as in classic BM25
            tid = self.vocab.get(term)
            if tid is None:
                continue
            lo, hi = self.indptr[tid], self.indptr[tid + 1]
            ids, tf = self.doc_ids[lo:hi], self.tfs[lo:hi]
            df = hi - lo
            idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))  # Lucene's non-negative idf
            out[ids] += idf * tf * (self.k1 + 1) / (tf + norm[ids])
        return out

    def save(self, directory: Path) -> list[Path]:
        arrays = directory / "bm25.npz"
        with open(arrays, "wb") as f:
            np.savez(f, indptr=self.indptr, doc_ids=self.doc_ids, tfs=self.tfs, doc_len=self.doc_len)
        vocab = directory / "bm25_vocab.json"
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        vocab.write_text(json.dumps({"k1": self.k1, "b": self.b, "terms": terms}, ensure_ascii=False),
                         encoding="utf-8")
        return [arrays, vocab]

    @classmethod
    def load(cls, directory: Path) -> "BM25Index":
        z = np.load(directory / "bm25.npz")
        meta = json.loads((directory / "bm25_vocab.json").read_text(encoding="utf-8"))
        vocab = {t: i for i, t in enumerate(meta["terms"])}
        return cls(vocab, z["indptr"], z["doc_ids"], z["tfs"], z["doc_len"], meta["k1"], meta["b"])
