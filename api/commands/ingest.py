"""`verirag ingest KB_DIR [--index DIR] [--embedder SPEC] [--rebuild]`: build or update a KB index."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ingest", help="build or incrementally update the index of a knowledge base",
                              description="Index a folder of .md/.txt/.html/.pdf documents. Only files whose "
                              "content changed are re-embedded; the write is atomic. Superseded documents "
                              "and quarantined chunks (text addressing the model) are listed.")
    p.add_argument("kb_dir", metavar="KB_DIR", help="knowledge-base folder")
    p.add_argument("--index", metavar="DIR", default=None,
                   help="index folder (default: KB_DIR/../.verirag/index)")
    p.add_argument("--embedder", metavar="PATH", default=None,
                   help="local sentence-embedding model folder (default: all-MiniLM-L6-v2, English-only; "
                        "'hashing' = benchmark-only hashing embedder)")
    p.add_argument("--rebuild", action="store_true", help="discard the existing index and rebuild from scratch")
    p.add_argument("--vector-index", choices=["auto", "flat", "hnsw", "ivf"], default=None,
                   help="FAISS index kind (default auto: exact below 20k chunks, HNSW above; ivf builds faster)")
    p.add_argument("--backend", choices=["faiss", "qdrant"], default=None,
                   help="where the vectors live (default: what the index records, faiss for a new one): faiss "
                        "in the index folder, or a Qdrant collection (--url for a server; else embedded in "
                        "--db-path, default INDEX/qdrant, one process at a time)")
    p.add_argument("--url", default=None, help="Qdrant server URL, e.g. http://localhost:6333 (API key: $QDRANT_API_KEY)")
    p.add_argument("--db-path", metavar="DIR", default=None, help="embedded Qdrant storage folder")
    p.add_argument("--collection", default=None, help="Qdrant collection name (default verirag)")
    p.add_argument("--db-timeout", type=float, default=None, metavar="S",
                   help="seconds one vector-database call may take before it fails (default 10)")
    p.add_argument("--strict", action="store_true", help="fail on any unreadable file instead of skipping it")
    p.add_argument("--json", action="store_true", help="print the ingest report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or warnings")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from retrieval import RetrievalError, VectorIndexConfig, ingest

    logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING, format="verirag: %(message)s")
    try:
        report = ingest(args.kb_dir, args.index, embedder=args.embedder, rebuild=args.rebuild,
                        progress=not args.quiet and not args.json, strict=args.strict,
                        vectors=VectorIndexConfig(kind=args.vector_index) if args.vector_index else None,
                        backend=_backend(args))
    except RetrievalError as exc:
        print(f"verirag ingest: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=1))
    else:
        print(("updated: " if report.changed else "up to date: ") + report.summary())
        for doc_id, by, how in report.superseded:
            print(f"superseded: {doc_id} by {by} ({how})")
        for chunk_id, first, last, reason in report.quarantined:
            print(f"quarantined: {chunk_id.rsplit('#', 1)[0]} lines {first}-{last}: {reason}")
        print(f"index: {report.index_dir}")
    return 0


def _backend(args: argparse.Namespace) -> Any:
    """The --backend options as a BackendConfig; None (keep the index's) when none was given."""
    from retrieval.backend import DEFAULT_COLLECTION, DEFAULT_TIMEOUT_S, BackendConfig
    from retrieval.errors import RetrievalError

    db_options = (args.url, args.db_path, args.collection, args.db_timeout)
    if args.backend is None:
        if any(x is not None for x in db_options):
            raise RetrievalError("--url, --db-path, --collection and --db-timeout need --backend qdrant")
        return None
    return BackendConfig(kind=args.backend, url=args.url, path=args.db_path,
                         collection=args.collection or DEFAULT_COLLECTION,
                         timeout_s=DEFAULT_TIMEOUT_S if args.db_timeout is None else args.db_timeout)
