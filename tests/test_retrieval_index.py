"""Retrieval: BM25 against a hand-written Okapi formula, FAISS (flat, HNSW) against brute force."""
from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval import vector_index
from retrieval.bm25 import BM25Index
from retrieval.embedder import HashingEmbedder
from retrieval.errors import RetrievalError
from retrieval.tokenize import tokenize
from retrieval.vector_index import VectorIndexConfig

TEXTS = ["annual leave is 25 days for full time staff", "leave requests go to the HR portal",
         "passwords change every 90 days", "全职员工每年享有二十五天年假", "年假申请须提前两周", "hotel limit per night"]


def reference_bm25(texts: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    docs = [tokenize(t) for t in texts]
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    out = []
    for d in docs:
        s = 0.0
        for q in tokenize(query):
            df = sum(q in x for x in docs)
            tf = d.count(q)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl)) if tf else 0.0
        out.append(s)
    return out


@pytest.mark.parametrize("query", ["annual leave days", "年假申请", "HR portal leave leave", "nothing matches"])
def test_bm25_matches_reference(query, tmp_path):
    idx = BM25Index.build(TEXTS)
    np.testing.assert_allclose(idx.scores(query), reference_bm25(TEXTS, query), rtol=1e-5, atol=1e-6)
    idx.save(tmp_path)
    np.testing.assert_allclose(BM25Index.load(tmp_path).scores(query), idx.scores(query))


def test_bm25_empty_collection():
    assert BM25Index.build([]).scores("leave").shape == (0,)


def _clustered(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, n // 50), d)).astype(np.float32)
    x = centres[rng.integers(0, len(centres), n)] + 0.5 * rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_flat_is_exact_and_hnsw_recall(tmp_path):
    x = _clustered(3000, 32, 0)
    q = _clustered(50, 32, 1)
    truth = np.argsort(-(q @ x.T), axis=1)[:, :10]
    flat, kind = vector_index.build(x, VectorIndexConfig())
    assert kind == "flat"  # below the threshold auto stays exact
    scores, ids = vector_index.search(flat, q, 10)
    np.testing.assert_array_equal(ids, truth)
    np.testing.assert_allclose(scores, np.take_along_axis(q @ x.T, truth, 1), rtol=1e-5)
    hnsw, kind = vector_index.build(x, VectorIndexConfig(hnsw_threshold=1000))
    assert kind == "hnsw"
    vector_index.save(hnsw, tmp_path / "v.faiss")
    _, ids = vector_index.search(vector_index.load(tmp_path / "v.faiss", ef_search=64), q, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, truth)])
    assert recall >= 0.95
    ivf, kind = vector_index.build(x, VectorIndexConfig(kind="ivf", ivf_nprobe=16))
    assert kind == "ivf" and ivf.nlist == 3000 // 39  # 2*sqrt(3000)=109 lists capped to 39 points each
    _, ids = vector_index.search(ivf, q, 10)
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, truth)]) >= 0.95


def test_vector_index_config_validation():
    with pytest.raises(RetrievalError, match="must be one of"):
        VectorIndexConfig(kind="ivf-magic")
    with pytest.raises(RetrievalError, match="bad HNSW"):
        VectorIndexConfig(hnsw_m=1)


def test_hashing_embedder_is_deterministic_and_normalised():
    e = HashingEmbedder(64)
    a = e.embed(["annual leave days", "年假申请", ""])
    np.testing.assert_allclose(a, e.embed(["annual leave days", "年假申请", ""]))
    np.testing.assert_allclose(np.linalg.norm(a[:2], axis=1), 1.0, rtol=1e-6)
    assert not a[2].any()  # no tokens, zero vector (not NaN)
    assert e.embed(["leave days"])[0] @ a[0] > 0.5 > e.embed(["hotel night"])[0] @ a[0]
