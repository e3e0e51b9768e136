"""Retrieval: incremental re-ingest, manifest mismatch, kill-during-ingest recovery, index status, CLI."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from retrieval import (ChunkingConfig, IndexCorruptError, IndexMismatchError, IndexNotFoundError, Retriever, RetrievalError,
                       get_embedder, index_status, ingest)
from retrieval.embedder import HashingEmbedder

KB = Path(__file__).parent / "fixtures" / "kb_small"
REPO = Path(__file__).resolve().parents[1]


class Counting:
    """Wraps an embedder and records every text it embeds."""

    def __init__(self, inner):
        self.inner, self.spec, self.name, self.dim = inner, inner.spec, inner.name, inner.dim
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += texts
        return self.inner.embed(texts)


@pytest.fixture
def kb(tmp_path) -> Path:
    shutil.copytree(KB, tmp_path / "kb")
    return tmp_path / "kb"


def test_incremental_reingest_embeds_only_changed_files(kb, tmp_path):
    idx = tmp_path / "index"
    first = Counting(get_embedder())
    r1 = ingest(kb, idx, embedder=first)
    n_probe = 1  # the manifest's fingerprint probe
    assert len(first.texts) == r1.num_chunks + n_probe == r1.embedded_chunks + n_probe
    before = Retriever.open(idx)

    second = Counting(get_embedder())
    r = ingest(kb, idx, embedder=second)
    assert not r.changed and second.texts == [] and r.version == r1.version  # nothing to do, no new version

    p = kb / "policies/remote_work.md"
    p.write_text(p.read_text(encoding="utf-8").replace("three days per week", "four days per week"), encoding="utf-8")
    (kb / "zh/jiaban.md").unlink()
    (kb / "it/new.md").write_text("# Printers\n\nThe office printer on floor 2 uses badge release.\n", encoding="utf-8")
    third = Counting(get_embedder())
    r3 = ingest(kb, idx, embedder=third)
    assert (r3.added, r3.updated, r3.removed) == (["it/new.md"], ["policies/remote_work.md"], ["zh/jiaban.md"])
    after = Retriever.open(idx)
    changed = [c for c in after.snapshot.chunks if c.doc_id in ("it/new.md", "policies/remote_work.md")]
    assert r3.embedded_chunks == len(changed) and len(third.texts) == len(changed) + 2 * n_probe  # check + manifest
    assert all(any(c.text in t for t in third.texts) for c in changed)
    assert "zh/jiaban.md" not in after.doc_ids and not any(c.doc_id == "zh/jiaban.md" for c in after.snapshot.chunks)
    # reused vectors are the very rows of the old index, and equal a fresh embedding of the same text
    old_rows = {c.chunk_id: i for i, c in enumerate(before.snapshot.chunks)}
    for i, c in enumerate(after.snapshot.chunks):
        if c.doc_id == "policies/annual_leave.md":
            np.testing.assert_array_equal(after.snapshot.embeddings[i], before.snapshot.embeddings[old_rows[c.chunk_id]])
    top = after.search("How many days per week can I work from home?", 1)[0]
    assert top.doc_id == "policies/remote_work.md" and "four days per week" in top.text
    assert after.search("printer badge release", 1)[0].doc_id == "it/new.md"
    assert all(p.doc_id != "zh/jiaban.md" for p in after.search("加班费怎么计算", 5))
    # a fresh full rebuild gives the same vectors (incremental == from scratch)
    ingest(kb, tmp_path / "fresh", embedder="default")
    fresh = Retriever.open(tmp_path / "fresh")
    assert [c.chunk_id for c in fresh.snapshot.chunks] == [c.chunk_id for c in after.snapshot.chunks]
    np.testing.assert_allclose(fresh.snapshot.embeddings, after.snapshot.embeddings, atol=1e-5)


def test_manifest_mismatch_is_a_clear_error(kb, tmp_path):
    idx = tmp_path / "index"
    ingest(kb, idx, embedder="hashing:64")
    with pytest.raises(IndexMismatchError, match="built with embedder 'hashing:64'"):
        ingest(kb, idx, embedder="hashing:128")
    with pytest.raises(IndexMismatchError, match="chunked with"):
        ingest(kb, idx, chunking=ChunkingConfig(max_chars=400))
    with pytest.raises(IndexMismatchError, match="dim 64"):
        Retriever.open(idx, embedder=HashingEmbedder(128))
    other = tmp_path / "other_kb"
    shutil.copytree(kb, other)
    with pytest.raises(IndexMismatchError, match="belongs to knowledge base"):
        ingest(other, idx)

    class Impostor(HashingEmbedder):  # same name and dim, different vectors: caught by the probe
        def embed(self, texts):
            return super().embed([t[::-1] for t in texts])
    with pytest.raises(IndexMismatchError, match="different vectors"):
        Retriever.open(idx, embedder=Impostor(64))
    manifest = next((idx / "versions").glob("v*")) / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "format_version": 99}))
    with pytest.raises(IndexMismatchError, match="format version 99"):
        Retriever.open(idx)
    manifest.write_text(json.dumps(data))
    (idx / "CURRENT").write_text("v999999\n")  # points at nothing: corrupt, and only --rebuild fixes it
    with pytest.raises(IndexCorruptError, match="rebuild"):
        ingest(kb, idx)
    with pytest.raises(IndexCorruptError, match="no manifest.json"):
        Retriever.open(idx)
    r = ingest(kb, idx, embedder="hashing:128", rebuild=True)
    assert r.changed and Retriever.open(idx).embedder.dim == 128


def test_bad_ingest_arguments(kb, tmp_path):
    with pytest.raises(RetrievalError, match="is not a directory"):
        ingest(tmp_path / "missing", tmp_path / "i")
    with pytest.raises(RetrievalError, match="inside the knowledge base"):
        ingest(kb, kb / "index")
    with pytest.raises(RetrievalError, match="neither 'default'"):
        ingest(kb, tmp_path / "i", embedder=str(tmp_path / "no-model"))
    with pytest.raises(RetrievalError, match="binary"):
        ingest(kb, tmp_path / "i", embedder="hashing", strict=True)
    with pytest.raises(IndexNotFoundError, match="no index"):
        Retriever.open(tmp_path / "nothing")
    with pytest.raises(RetrievalError, match="is not a directory"):
        index_status(tmp_path / "missing", tmp_path / "i")
    for spec in ["hashing:abc", "hashing:4"]:
        with pytest.raises(RetrievalError, match="hashing"):
            get_embedder(spec)


def _spawn_ingest(kb: Path, idx: Path, pause_at: str) -> subprocess.Popen:
    env = {**os.environ, "VERIRAG_INGEST_PAUSE_AT": pause_at, "PYTHONPATH": str(REPO)}
    code = f"from retrieval import ingest; ingest({str(kb)!r}, {str(idx)!r})"
    return subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("pause_at", ["write", "swap"])
def test_kill_during_ingest_leaves_previous_index_loadable(kb, tmp_path, pause_at):
    idx = tmp_path / "index"
    v1 = ingest(kb, idx, embedder="hashing").version
    (kb / "policies/remote_work.md").unlink()
    (kb / "it/new.md").write_text("# Printers\n\nThe printer uses badge release.\n", encoding="utf-8")
    proc = _spawn_ingest(kb, idx, pause_at)
    try:
        deadline = time.time() + 120
        line = ""
        while "paused at" not in line and time.time() < deadline and proc.poll() is None:
            line = proc.stderr.readline()
        assert f"paused at {pause_at}" in line, f"ingest never reached the pause point: {line!r}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    leftovers = [p.name for p in (idx / "versions").iterdir()]
    assert len(leftovers) == 2  # the old version plus the killed one's (temp or renamed-but-not-current)
    r = Retriever.open(idx)
    assert r.version == v1 and "policies/remote_work.md" in r.doc_ids and "it/new.md" not in r.doc_ids
    assert r.search("How many days per week can I work from home?", 3)[0].doc_id == "policies/remote_work.md"
    assert index_status(kb, idx) == "stale"
    v2 = ingest(kb, idx)  # the next ingest cleans up and succeeds
    r2 = Retriever.open(idx)
    assert r2.version == v2.version != v1 and "it/new.md" in r2.doc_ids and "policies/remote_work.md" not in r2.doc_ids
    assert not list((idx / "versions").glob(".tmp-*"))


def test_index_status(kb, tmp_path):
    idx = tmp_path / "index"
    assert index_status(kb, idx) == "missing"
    ingest(kb, idx, embedder="hashing")
    assert index_status(kb, idx) == "fresh"
    (kb / "bad/latin1.md").write_text("fixed now\n", encoding="utf-8")  # a skipped file that loads now
    assert index_status(kb, idx) == "stale"
    ingest(kb, idx)
    assert index_status(kb, idx) == "fresh"
    (kb / "zh/jiaban.md").unlink()
    assert index_status(kb, idx) == "stale"


def test_cli_ingest_and_search(kb, tmp_path):
    idx = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "api.cli", *a], env=env, capture_output=True,
                                    text=True, cwd=REPO, timeout=300)
    r = run("ingest", str(kb), "--index", str(idx), "--embedder", "hashing", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["num_documents"] == 9 and "skipped bad/blob.txt" in r.stderr
    r = run("search", "hotel limit per night", "--index", str(idx), "--top-k", "2", "--json")
    hits = json.loads(r.stdout)
    assert r.returncode == 0 and len(hits) == 2 and hits[0]["doc_id"] == "finance/expenses.html"
    r = run("search", "", "--index", str(idx))
    assert r.returncode == 1 and "query must be a non-empty string" in r.stderr and "Traceback" not in r.stderr
    r = run("search", "x", "--index", str(idx), "--top-k", "0")
    assert r.returncode == 1 and "top_k" in r.stderr
    r = run("ingest", str(tmp_path / "nope"))
    assert r.returncode == 1 and "is not a directory" in r.stderr and "Traceback" not in r.stderr


def test_progress_bar_and_report_summary(kb, tmp_path, capsys):
    r = ingest(kb, tmp_path / "index", embedder="hashing", progress=True)
    err = capsys.readouterr().err
    assert "embedding" in err and f"{r.num_chunks}/{r.num_chunks}" in err
    assert f"{r.num_chunks} chunks" in r.summary() and "2 skipped" in r.summary()


def test_index_from_another_chunker_version_is_rechunked(kb, tmp_path):
    idx = tmp_path / "index"
    r1 = ingest(kb, idx, embedder="hashing")
    manifest = idx / "versions" / r1.version / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "chunker_version": 1}))
    r2 = ingest(kb, idx)
    assert r2.changed and r2.embedded_chunks == r2.num_chunks == r1.num_chunks and not r2.unchanged
    assert not ingest(kb, idx).changed
