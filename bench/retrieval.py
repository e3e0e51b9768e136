"""Retrieval benchmark at 100k chunks: ANN recall@10 vs exact search, query latency, ingest throughput,
index size on disk. Baselines measured in the same run: exact FAISS (flat) for the vector part, and the
MiniLM embedder's own throughput for ingest.

    .venv/bin/python bench/retrieval.py [--n 100000] [--queries 300] [--skip-ingest]
        [--backend faiss|qdrant [--qdrant-url URL | --qdrant-path DIR]]

--backend qdrant measures the same vectors and KB through a Qdrant collection (embedded in memory by
default; --qdrant-url for a server) against FAISS exact search in the same run.

Synthetic data, stated plainly: the vector part uses clustered unit vectors (2,000 topics; a chunk has
cosine ~0.7 to its topic; a query is a perturbed chunk at cosine ~0.85), the shape real sentence
embeddings have. The ingest part uses generated English-like text and the BENCHMARK-ONLY hashing
embedder (MiniLM would take ~100k/100 s ≈ 17 minutes of embedding alone on one core; its measured
throughput is printed so the real ingest time can be projected).
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from retrieval import Retriever, VectorIndexConfig, get_embedder, ingest  # noqa: E402
from retrieval import vector_index  # noqa: E402


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def synthetic_vectors(n: int, q: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    topics = unit(rng.standard_normal((2000, d)))
    x = unit(0.7 * topics[rng.integers(0, len(topics), n)] + 0.714 * unit(rng.standard_normal((n, d))))
    queries = unit(0.85 * x[rng.integers(0, n, q)] + 0.527 * unit(rng.standard_normal((q, d))))
    return x, queries


def latencies_ms(fn, queries) -> np.ndarray:
    out = []
    for qi in queries:
        t = time.perf_counter()
        fn(qi)
        out.append((time.perf_counter() - t) * 1e3)
    return np.asarray(out)


def recall_at(ids: np.ndarray, truth: np.ndarray, k: int = 10) -> float:
    return float(np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(ids, truth)]))


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def bench_vectors(n: int, nq: int, d: int, kinds: list[str], tmp: Path, args: argparse.Namespace) -> None:
    print(f"\n## vector part: {n} synthetic vectors, dim {d}, {nq} queries, faiss threads {faiss.omp_get_max_threads()}")
    x, queries = synthetic_vectors(n, nq, d)
    flat, _ = vector_index.build(x, VectorIndexConfig(kind="flat"))
    _, truth = flat.search(queries, 10)
    lat_flat = latencies_ms(lambda qv: flat.search(qv[None], 10), queries)
    print(f"flat (exact, baseline): p50 {np.median(lat_flat):.2f} ms  p95 {np.percentile(lat_flat, 95):.2f} ms  "
          f"size {x.nbytes / 2**20:.1f} MiB")
    if args.backend == "qdrant":
        bench_vector_db(x, queries, truth, lat_flat, args, tmp)
        return
    for kind in kinds:
        t = time.perf_counter()
        index, _ = vector_index.build(x, VectorIndexConfig(kind=kind))
        build_s = time.perf_counter() - t
        _, ids = index.search(queries, 10)
        lat = latencies_ms(lambda qv: index.search(qv[None], 10), queries)
        vector_index.save(index, tmp / f"{kind}.faiss")
        size = (tmp / f"{kind}.faiss").stat().st_size / 2**20
        print(f"{kind}: recall@10 {recall_at(ids, truth):.4f}  p50 {np.median(lat):.2f} ms  "
              f"p95 {np.percentile(lat, 95):.2f} ms  ({np.median(lat_flat) / np.median(lat):.1f}x faster than flat)  "
              f"build {build_s:.1f} s  size {size:.1f} MiB", flush=True)


def qdrant_config(args: argparse.Namespace, collection: str):
    from retrieval.backend import BackendConfig
    return BackendConfig(kind="qdrant", url=args.qdrant_url, collection=collection, timeout_s=60,
                         path=None if args.qdrant_url else (args.qdrant_path or ":memory:"))


def bench_vector_db(x: np.ndarray, queries: np.ndarray, truth: np.ndarray, lat_flat: np.ndarray,
                    args: argparse.Namespace, tmp: Path) -> None:
    """The same synthetic vectors through a Qdrant collection: recall@10 against FAISS exact, p50."""
    from retrieval.backend import ChunkFilter
    from retrieval.qdrant_backend import QdrantBackend
    db = QdrantBackend(qdrant_config(args, "bench_vectors"), tmp)
    db.ensure_collection(x.shape[1], recreate=True)
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(x))]
    t = time.perf_counter()
    for s in range(0, len(x), 1024):
        db.upsert(ids[s:s + 1024], x[s:s + 1024], [{"doc_id": f"d{i % 1000}", "quarantined": False}
                                                      for i in range(s, min(len(x), s + 1024))])
    load_s = time.perf_counter() - t
    db.bind(ids)
    where = ChunkFilter(include_quarantined=True)  # no filter: the plain nearest-neighbour query
    found = np.stack([np.pad(db.search(qv, 10, None, where)[0], (0, 10))[:10] for qv in queries])
    lat = latencies_ms(lambda qv: db.search(qv, 10, None, where), queries)
    print(f"qdrant ({db.where}): recall@10 {recall_at(found, truth):.4f}  p50 {np.median(lat):.2f} ms  "
          f"p95 {np.percentile(lat, 95):.2f} ms  (flat exact p50 {np.median(lat_flat):.2f} ms)  "
          f"load {load_s:.1f} s", flush=True)


def synthetic_kb(root: Path, target_chunks: int, seed: int = 0) -> None:
    rnd = random.Random(seed)
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "po", "de", "ha", "ju", "qu", "ze", "bo", "fi"]
    vocab = ["".join(rnd.choice(syll) for _ in range(rnd.randint(2, 4))) for _ in range(8000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like word frequencies
    per_doc = 50
    for di in range(max(1, target_chunks // per_doc)):
        paras = []
        for pi in range(per_doc):
            words = rnd.choices(vocab, weights, k=88)  # ~560 chars: one paragraph per chunk
            sents = [" ".join(words[i:i + 11]).capitalize() + "." for i in range(0, 88, 11)]
            paras.append((f"## Section {pi}\n\n" if pi % 10 == 0 else "") + " ".join(sents))
        d = root / f"d{di // 100:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"doc{di:05d}.md").write_text(f"---\ntitle: Doc {di}\ntags: [t{di % 7}]\n---\n# Doc {di}\n\n"
                                            + "\n\n".join(paras) + "\n", encoding="utf-8")


def bench_ingest(n: int, nq: int, tmp: Path, args: argparse.Namespace) -> None:
    kb = tmp / "kb"
    synthetic_kb(kb, n)
    print(f"\n## ingest + hybrid search: synthetic KB, {sum(1 for _ in kb.rglob('*.md'))} files, "
          "hashing embedder (benchmark only)")
    backend = qdrant_config(args, "bench_kb") if args.backend == "qdrant" else None
    t = time.perf_counter()
    report = ingest(kb, tmp / "index", embedder="hashing", backend=backend)
    secs = time.perf_counter() - t
    print(f"ingest: {report.num_chunks} chunks in {secs:.1f} s = {report.num_chunks / secs:.0f} chunks/s; "
          f"index {report.vector_index}; index on disk {dir_mb(tmp / 'index'):.1f} MiB")
    r = Retriever.open(tmp / "index")
    rng = random.Random(1)
    chunks = r.snapshot.chunks
    qs = [" ".join(rng.sample(chunks[rng.randrange(len(chunks))].text.split(), 6)) for _ in range(nq)]
    qv = r.embedder.embed(qs)
    if backend is None:
        exact = faiss.IndexFlatIP(r.embedder.dim)
        exact.add(r.snapshot.embeddings)
        _, truth = exact.search(qv, 10)
        _, ids = r.snapshot.vectors.search(qv, 10)
        print(f"{report.vector_index} recall@10 on hashing vectors (near-orthogonal, a hard case): "
              f"{recall_at(ids, truth):.4f}")
    for mode in ("vector", "bm25", "hybrid"):
        lat = latencies_ms(lambda q: r.search(q, 10, mode=mode), qs)
        print(f"search mode={mode}: p50 {np.median(lat):.2f} ms  p95 {np.percentile(lat, 95):.2f} ms "
              "(includes query embedding)")
    t = time.perf_counter()
    again = ingest(kb, tmp / "index")
    print(f"re-ingest, nothing changed: {time.perf_counter() - t:.1f} s (changed={again.changed})")


def bench_minilm(sample: int) -> None:
    emb = get_embedder()
    rnd = random.Random(2)
    words = "employees leave policy annual days carry over manager approval request travel hotel night".split()
    texts = [" ".join(rnd.choices(words, k=120)) for _ in range(sample)]  # ~700 chars, like a chunk
    emb.embed(texts[:8])
    t = time.perf_counter()
    emb.embed(texts)
    rate = sample / (time.perf_counter() - t)
    import torch
    print(f"\n## MiniLM (the product embedder), {torch.get_num_threads()} torch threads: {rate:.1f} chunks/s "
          f"(~700-char chunks) -> 100k chunks would take {100_000 / rate / 60:.0f} min to embed")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--kinds", default="hnsw,ivf")
    ap.add_argument("--minilm-sample", type=int, default=128)
    ap.add_argument("--skip-ingest", action="store_true")
    ap.add_argument("--skip-vectors", action="store_true")
    ap.add_argument("--backend", choices=["faiss", "qdrant"], default="faiss")
    ap.add_argument("--qdrant-url", default=None, help="a Qdrant server (default: embedded, in memory)")
    ap.add_argument("--qdrant-path", default=None, help="embedded Qdrant storage folder (default: in memory)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="verirag-bench-"))
    try:
        if not args.skip_vectors:
            bench_vectors(args.n, args.queries, args.dim, args.kinds.split(","), tmp, args)
        if not args.skip_ingest:
            bench_ingest(args.n, args.queries, tmp, args)
        if args.minilm_sample:
            bench_minilm(args.minilm_sample)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
