"""`verirag ingest KB_DIR [--index DIR] [--embedder SPEC] [--rebuild]`: build or update a KB index."""
from __future__ import annotations

import argparse
import json
import logging
import sys


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
                        vectors=VectorIndexConfig(kind=args.vector_index) if args.vector_index else None)
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
