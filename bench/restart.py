"""Restart after a crash: how soon a `verirag serve` answers when its index is stale.

The sample KB is copied and indexed, then made stale (``--extra-docs`` new documents, each a copy of a sample
document with its numbers changed), and a `verirag ingest` of it is killed with SIGKILL half-way (at the point
where the new version is being written): what a crash during an ingest leaves. Then `verirag serve` starts on
it, and the seconds until the port answers, /verify answers 200, /ask answers 200, /readyz is ready, and the
index is fresh again (the background re-ingest swapped in) are measured from the start of the process.

    .venv/bin/python bench/restart.py --extra-docs 200
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
VERIRAG = [sys.executable, "-m", "api.cli"]
QUESTION = "What is the hotel limit per night in a Tier 1 city?"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "VERIRAG_ADMIN_API_KEY": "restart-bench-admin", **extra}


def make_stale(kb: Path, extra_docs: int) -> None:
    """``extra_docs`` new documents: sample documents under new names, their numbers shifted (new chunks)."""
    samples = sorted(p for p in kb.rglob("*.md") if p.is_file())
    (kb / "extra").mkdir(exist_ok=True)
    for i in range(extra_docs):
        src = samples[i % len(samples)]
        text = src.read_text(encoding="utf-8")
        cut = text.find("\n---\n", 4) + 5 if text.startswith("---\n") else 0   # the front matter stays valid
        body = re.sub(r"\d+", lambda m: str(int(m.group()) + i + 1), text[cut:])
        (kb / "extra" / f"{i:04d}_{src.name}").write_text(text[:cut].replace("title: ", f"title: Copy {i} of ", 1)
                                                         + body, encoding="utf-8")


def kill_an_ingest(kb: Path, index: Path) -> None:
    proc = subprocess.Popen([*VERIRAG, "ingest", str(kb), "--index", str(index)], env=_env(
        VERIRAG_INGEST_PAUSE_AT="write"), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=REPO)
    line = ""
    assert proc.stderr is not None
    while "paused at" not in line and proc.poll() is None:
        line = proc.stderr.readline()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)


def measure(kb: Path, index: Path, timeout_s: float) -> dict[str, float | None]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([*VERIRAG, "serve", "--kb", str(kb), "--index", str(index), "--port", str(port),
                             "--access-log", "off"], env=_env(), stderr=subprocess.DEVNULL, cwd=REPO)
    seen: dict[str, float | None] = {k: None for k in ("port", "verify", "ask", "ready", "fresh")}
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            while time.perf_counter() - t0 < timeout_s and proc.poll() is None and None in seen.values():
                now = lambda: round(time.perf_counter() - t0, 1)  # noqa: E731
                try:
                    ready = http.get("/readyz")
                except httpx.HTTPError:
                    time.sleep(0.1)
                    continue
                seen["port"] = seen["port"] or now()
                if ready.status_code == 200:
                    seen["ready"] = seen["ready"] or now()
                if ready.json().get("index") == "fresh":
                    seen["fresh"] = seen["fresh"] or now()
                if seen["verify"] is None and http.post("/verify", json={"question": QUESTION, "answer":
                                                                          "EUR 180 per night."}).status_code == 200:
                    seen["verify"] = now()
                if seen["ask"] is None and http.post("/ask", json={"question": QUESTION,
                                                                    "max_tokens": 16}).status_code == 200:
                    seen["ask"] = now()
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return seen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra-docs", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        kb, index = Path(tmp) / "kb", Path(tmp) / "index"
        shutil.copytree(REPO / "kb", kb)
        t = time.perf_counter()
        subprocess.run([*VERIRAG, "ingest", str(kb), "--index", str(index)], env=_env(), check=True, cwd=REPO,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first_ingest = round(time.perf_counter() - t, 1)
        make_stale(kb, args.extra_docs)
        kill_an_ingest(kb, index)
        seconds = measure(kb, index, args.timeout)
    print(json.dumps({"extra_docs": args.extra_docs, "first_ingest_s": first_ingest, "seconds_after_start": seconds}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
