"""Load test of the service: N concurrent clients streaming /ask against a live server on 127.0.0.1.

Reports throughput, p50/p95 latency, TTFT and errors at concurrency 1 and 16 (same questions, same run),
and the ratio between them: the continuous-batching gain.

    .venv/bin/python bench/serve.py --requests 8 --concurrent-requests 32 --max-tokens 16

With --replicas 1,2 it compares Ray Serve deployments instead (`verirag serve --replicas N --ray-address
local`, each replica given cores/N CPUs so every run uses the whole machine): the concurrent level only,
once per replica count, and the throughput ratio of the last count to the first.

    .venv/bin/python bench/serve.py --replicas 1,2 --concurrent-requests 32 --max-tokens 16
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

QUESTIONS = [
    "How many days of annual leave does a full-time employee in Berlin get?",
    "How many days per week can employees work from home?",
    "What is the notice period during probation?",
    "全职员工每年有多少天年假？",
    "Who approves travel expenses?",
    "How long is the warranty on the robot arm?",
    "What is the reimbursement limit for a hotel night?",
    "How much sick leave needs a doctor's certificate?",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _one(client: httpx.AsyncClient, question: str, max_tokens: int) -> dict:
    t0 = time.perf_counter()
    ttft, status, tokens = None, "error", 0
    body = {"question": question, "max_tokens": max_tokens, "top_k": 3, "policy": "flag", "stream": True}
    async with client.stream("POST", "/ask", json=body) as r:
        if r.status_code != 200:
            return {"ok": False, "latency": time.perf_counter() - t0, "ttft": None, "tokens": 0}
        event = None
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                if event == "token" and ttft is None:
                    ttft = time.perf_counter() - t0
                if event == "result":
                    result = json.loads(line[6:])["result"]
                    status, tokens = result["status"], result["usage"]["completion_tokens"]
                if event == "error":
                    return {"ok": False, "latency": time.perf_counter() - t0, "ttft": ttft, "tokens": 0}
    return {"ok": status != "error", "latency": time.perf_counter() - t0, "ttft": ttft, "tokens": tokens}


async def run_level(url: str, concurrency: int, n: int, max_tokens: int, max_seconds: float) -> dict:
    results: list[dict] = []
    queue = [QUESTIONS[i % len(QUESTIONS)] for i in range(n)]
    deadline = time.perf_counter() + max_seconds
    async with httpx.AsyncClient(base_url=url, timeout=max_seconds) as client:
        async def worker() -> None:
            while queue and time.perf_counter() < deadline:
                q = queue.pop(0)
                try:
                    results.append(await _one(client, q, max_tokens))
                except httpx.HTTPError:
                    results.append({"ok": False, "latency": 0.0, "ttft": None, "tokens": 0})

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    ok = [r for r in results if r["ok"]]
    lat = sorted(r["latency"] for r in ok) or [float("nan")]
    ttfts = sorted(r["ttft"] for r in ok if r["ttft"] is not None) or [float("nan")]

    def pct(xs: list[float], p: float) -> float:
        return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]

    return {"concurrency": concurrency, "requests": len(results), "errors": len(results) - len(ok),
            "wall_s": wall, "req_per_s": len(ok) / wall, "tokens_per_s": sum(r["tokens"] for r in ok) / wall,
            "p50_s": statistics.median(lat), "p95_s": pct(lat, 0.95), "ttft_p50_s": statistics.median(ttfts),
            "ttft_p95_s": pct(ttfts, 0.95)}


def start_server(port: int, args: argparse.Namespace, replicas: int | None = None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    for flag, value in (("--kb", args.kb), ("--rules", args.rules), ("--model", args.model)):
        if value:
            cmd += [flag, value]
    env = {**os.environ, "VERIRAG_LOG_LEVEL": "warning"}
    if replicas is not None:  # on a local Ray cluster, even for one replica
        cmd += ["--replicas", str(replicas), "--ray-address", "local"]
        # by default the machine's cores split evenly (every run uses all of them); a fixed --replica-cpus
        # gives each replica its own cores instead: the scaling figure on a machine with the cores for it
        cpus = args.replica_cpus or max((os.cpu_count() or 1) / replicas, 0.5)
        env["VERIRAG_REPLICA_CPUS"] = str(cpus)
    return subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent, env=env)


def wait_replicas(url: str, proc: subprocess.Popen, n: int, timeout: float) -> None:
    """Until n distinct replicas (x-verirag-replica) have answered /readyz with 200."""
    ready: set[str] = set()
    deadline = time.time() + timeout
    while time.time() < deadline and len(ready) < n:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            r = httpx.get(f"{url}/readyz", timeout=5)
            if r.status_code == 200:
                ready.add(r.headers.get("x-verirag-replica", "?"))
        except httpx.HTTPError:
            time.sleep(1)
        time.sleep(0.2)
    if len(ready) < n:
        raise SystemExit(f"only {len(ready)} of {n} replicas became ready")


def _counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected replica counts such as 1,2, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"replica counts must be >= 1, got {text!r}")
    return counts


def compare_replicas(args: argparse.Namespace) -> int:
    counts = args.replicas
    rows = []
    for n in counts:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(port, args, replicas=n)
        try:
            t0 = time.perf_counter()
            wait_replicas(url, proc, n, 1200)
            up = time.perf_counter() - t0
            asyncio.run(run_level(url, 2 * n, 2 * n, args.max_tokens, args.max_seconds))  # warm-up, each replica
            row = asyncio.run(run_level(url, args.concurrency, args.concurrent_requests, args.max_tokens,
                                        args.max_seconds))
            rows.append({**row, "replicas": n, "up_s": up})
        finally:
            proc.terminate()  # SIGTERM: the command removes its app and stops its local cluster
            proc.wait(120)
    print(f"{'replicas':>8} {'up s':>6} {'conc':>5} {'reqs':>5} {'err':>4} {'req/s':>7} {'tok/s':>7} {'p50 s':>7} "
          f"{'p95 s':>7} {'TTFT p50':>9}")
    for r in rows:
        print(f"{r['replicas']:>8} {r['up_s']:>6.0f} {r['concurrency']:>5} {r['requests']:>5} {r['errors']:>4} "
              f"{r['req_per_s']:>7.2f} {r['tokens_per_s']:>7.1f} {r['p50_s']:>7.2f} {r['p95_s']:>7.2f} "
              f"{r['ttft_p50_s']:>9.2f}")
    first, last = rows[0], rows[-1]
    print(f"throughput {last['replicas']} vs {first['replicas']} replicas at concurrency {args.concurrency}: "
          f"{last['req_per_s'] / max(first['req_per_s'], 1e-9):.2f}x requests/s, "
          f"{last['tokens_per_s'] / max(first['tokens_per_s'], 1e-9):.2f}x tokens/s "
          f"({os.cpu_count()} CPU cores on this machine)")
    return 1 if any(r["errors"] for r in rows) else 0


def wait_ready(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise SystemExit("server did not become ready")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="an already running server (default: start one on a free port)")
    ap.add_argument("--kb"), ap.add_argument("--rules"), ap.add_argument("--model")
    ap.add_argument("--requests", type=int, default=8, help="requests at concurrency 1")
    ap.add_argument("--concurrent-requests", type=int, default=32, help="requests at concurrency 16")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--max-seconds", type=float, default=600, help="time bound per level")
    ap.add_argument("--replicas", type=_counts, metavar="N,M", help="compare Ray Serve deployments of N and M replicas")
    ap.add_argument("--replica-cpus", type=float, metavar="C",
                    help="Ray CPUs (and torch threads) per replica; default: the machine's cores / N")
    args = ap.parse_args()
    if args.replicas:
        return compare_replicas(args)
    proc = None
    url = args.url
    if url is None:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(port, args)
    try:
        wait_ready(url, proc, 900) if proc else None
        asyncio.run(run_level(url, 2, 2, args.max_tokens, args.max_seconds))  # warm-up (index, caches)
        base = asyncio.run(run_level(url, 1, args.requests, args.max_tokens, args.max_seconds))
        batched = asyncio.run(run_level(url, args.concurrency, args.concurrent_requests, args.max_tokens,
                                        args.max_seconds))
    finally:
        if proc:
            proc.terminate()
            proc.wait(30)
    print(f"{'conc':>5} {'reqs':>5} {'err':>4} {'req/s':>7} {'tok/s':>7} {'p50 s':>7} {'p95 s':>7} "
          f"{'TTFT p50':>9} {'TTFT p95':>9}")
    for r in (base, batched):
        print(f"{r['concurrency']:>5} {r['requests']:>5} {r['errors']:>4} {r['req_per_s']:>7.2f} "
              f"{r['tokens_per_s']:>7.1f} {r['p50_s']:>7.2f} {r['p95_s']:>7.2f} {r['ttft_p50_s']:>9.2f} "
              f"{r['ttft_p95_s']:>9.2f}")
    print(f"throughput gain at concurrency {args.concurrency} vs 1: "
          f"{batched['req_per_s'] / base['req_per_s']:.2f}x requests/s, "
          f"{batched['tokens_per_s'] / max(base['tokens_per_s'], 1e-9):.2f}x tokens/s")
    return 1 if base["errors"] or batched["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
