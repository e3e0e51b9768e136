"""One index version in memory: document metadata and texts, chunks, BM25, and (FAISS backend) the
embeddings and FAISS index; with a vector database backend the vectors live in the database."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import faiss
import numpy as np

from . import vector_index
from .bm25 import BM25Index
from .errors import IndexCorruptError
from .records import Chunk, DocumentMeta
from .store import read_manifest, write_file


@dataclass
class Snapshot:
    manifest: dict
    docs: dict[str, DocumentMeta]     # doc_id -> meta, in KB order
    texts: dict[str, str]             # doc_id -> document text (what spans index into)
    chunks: list[Chunk]               # row i <-> embeddings[i] <-> FAISS id i <-> BM25 doc i
    embeddings: np.ndarray | None     # float32 [n, dim]; None: the vectors live in a vector database
    vectors: faiss.Index | None
    bm25: BM25Index

    def save(self, directory: Path) -> list[str]:
        """Write every file but the manifest into `directory`, fsynced; returns the file names."""
        docs = "\n".join(json.dumps({**asdict(m), "text": self.texts[d]}, ensure_ascii=False)
                         for d, m in self.docs.items())
        write_file(directory / "docs.jsonl", docs)
        # A chunk's text is its document's text[start:end]: stored once, in docs.jsonl.
        write_file(directory / "chunks.jsonl", "\n".join(
            json.dumps({k: v for k, v in asdict(c).items() if k != "text"}, ensure_ascii=False) for c in self.chunks))
        names = ["docs.jsonl", "chunks.jsonl"]
        if self.embeddings is not None:
            with open(directory / "embeddings.npy", "wb") as f:
                np.save(f, self.embeddings)
            names.append("embeddings.npy")
        if self.vectors is not None and not isinstance(self.vectors, faiss.IndexFlat):
            vector_index.save(self.vectors, directory / "vectors.faiss")  # a flat one is rebuilt from embeddings
            names.append("vectors.faiss")
        names += [p.name for p in self.bm25.save(directory)]
        for name in names:  # np.save / faiss / bm25 write through their own handles: fsync them here
            with open(directory / name, "rb+") as f:
                f.flush()
                os.fsync(f.fileno())
        return names

    @classmethod
    def load(cls, vdir: Path, ef_search: int | None = None) -> "Snapshot":
        manifest = read_manifest(vdir)
        try:
            docs: dict[str, DocumentMeta] = {}
            texts: dict[str, str] = {}
            for line in (vdir / "docs.jsonl").read_text(encoding="utf-8").splitlines():
                if line:
                    rec = json.loads(line)
                    texts[rec["doc_id"]] = rec.pop("text")
                    docs[rec["doc_id"]] = DocumentMeta(**rec)
            chunks = []
            for line in (vdir / "chunks.jsonl").read_text(encoding="utf-8").splitlines():
                if line:
                    rec = json.loads(line)
                    rec.pop("text", None)  # indexes written before texts were deduplicated carry it
                    chunks.append(Chunk(text=texts[rec["doc_id"]][rec["start"]:rec["end"]], **rec))
            in_db = (manifest.get("backend") or {}).get("kind", "faiss") != "faiss"
            embeddings = None if in_db else np.load(vdir / "embeddings.npy")
            vectors: faiss.Index | None = None
            if not in_db and (vdir / "vectors.faiss").is_file():
                vcfg = manifest["vector_index"]["config"]  # search-time knobs are not all kept by FAISS files
                vectors = vector_index.load(vdir / "vectors.faiss", ef_search or vcfg["ef_search"],
                                            vcfg.get("ivf_nprobe"))
            elif embeddings is not None:
                vectors = faiss.IndexFlatIP(int(manifest["embedder"]["dim"]))
                if len(embeddings):
                    vectors.add(embeddings)
            bm25 = BM25Index.load(vdir)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise IndexCorruptError(f"{vdir}: cannot load index files ({type(exc).__name__}: {exc})") from None
        n = len(chunks)
        if embeddings is None or vectors is None:
            if not bm25.num_docs == n == manifest.get("num_chunks"):
                raise IndexCorruptError(f"{vdir}: {n} chunks but {bm25.num_docs} BM25 rows, manifest says "
                                        f"{manifest.get('num_chunks')}")
            return cls(manifest, docs, texts, chunks, None, None, bm25)
        if not (embeddings.shape[0] == vectors.ntotal == bm25.num_docs == n == manifest.get("num_chunks")):
            raise IndexCorruptError(f"{vdir}: {n} chunks but {embeddings.shape[0]} embeddings, "
                                    f"{vectors.ntotal} vectors, {bm25.num_docs} BM25 rows")
        if n and embeddings.shape[1] != manifest["embedder"]["dim"]:
            raise IndexCorruptError(f"{vdir}: embeddings have dim {embeddings.shape[1]}, manifest says "
                                    f"{manifest['embedder']['dim']}")
        return cls(manifest, docs, texts, chunks, embeddings, vectors, bm25)
