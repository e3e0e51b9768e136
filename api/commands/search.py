"""`verirag search "query" [--index DIR] [--top-k N] [--json]`: hybrid search of an ingested KB."""
from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("search", help="search an ingested knowledge base (FAISS + BM25 hybrid)")
    p.add_argument("query", help="the search text (English or Chinese)")
    p.add_argument("--index", metavar="DIR", default=None,
                   help="index folder (default: --kb's default index, else the embedded kb/'s)")
    p.add_argument("--kb", metavar="KB_DIR", default=None, help="knowledge base whose default index to use")
    p.add_argument("--top-k", type=int, default=5, help="number of passages (default 5)")
    p.add_argument("--tag", action="append", default=None, help="only documents with this tag (repeatable)")
    p.add_argument("--doc-id", action="append", default=None, help="only this document (repeatable)")
    p.add_argument("--language", default=None, help="only documents in this language (e.g. en, zh)")
    p.add_argument("--exclude-superseded", action="store_true", help="drop documents another one supersedes")
    p.add_argument("--mode", choices=["hybrid", "vector", "bm25"], default="hybrid")
    p.add_argument("--json", action="store_true", help="print passages as JSON")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from retrieval import RetrievalError, Retriever, default_index_dir

    try:
        if args.index or args.kb:
            retriever = Retriever.open(args.index or default_index_dir(args.kb))
        else:  # the embedded KB, from any folder (ingested on first use)
            from pipeline.defaults import DEFAULT_KB_DIR
            from pipeline.loop.factory import open_retriever

            retriever = open_retriever(DEFAULT_KB_DIR)
        passages = retriever.search(args.query, args.top_k, tags=args.tag, language=args.language,
                                    exclude_superseded=args.exclude_superseded, mode=args.mode,
                                    doc_ids=args.doc_id)
    except RetrievalError as exc:
        print(f"verirag search: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([asdict(p) for p in passages], ensure_ascii=False, indent=1))
        return 0
    if not passages:
        print("no passages found")
    for rank, p in enumerate(passages, 1):
        flag = f"  [superseded by {p.superseded_by}: {p.superseded_why}]" if p.superseded else ""
        where = " > ".join(p.heading_path)
        print(f"[{rank}] {p.doc_id}:{p.start_line}-{p.end_line}  score={p.score:.4f}{flag}")
        if where:
            print(f"    {where}")
        text = " ".join(p.text.split())
        print(f"    {text[:300]}{'…' if len(text) > 300 else ''}")
    return 0
