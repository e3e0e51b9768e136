"""Reload storm: clients asking (/ask and /verify) while the rules are reloaded every 200 ms between two rule
sets; counts the answers that match neither set's result (a request checked against a mix of states).

Each rule set's result is measured first, on a server that is not reloading: a request during the storm must
give exactly one of them, and where the response names its ``rules_version``, exactly that version's.
The domain is a small leave KB indexed with the hashing embedder (no model download), and the model is a
fixed draft (no engine): what is measured is the service's state handling, not generation.

    .venv/bin/python bench/reload_storm.py --clients 8 --seconds 60 --interval 0.2
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import httpx

ADMIN = "storm-admin-key"
QUESTION = "How much annual leave do full-time employees get?"
ANSWER = "Full-time employees get 25 days of annual leave."
DRAFT = "Full-time employees get 25 days of annual leave [1]."
KB = {
    "hr/leave.md": "# Annual leave\n\nFull-time employees get 25 days of annual leave per year.\n",
    "hr/remote.md": "# Remote work\n\nRemote work is allowed up to 3 days per week with approval.\n",
}
_VOCAB = ('type group "employee group" aka "employees"\n'
          'entity group full_time "full-time employee" aka "full-time employees"\n')
# Two rule sets that disagree on the relation's name (so facts read with one are wrong for the other) and on
# the limit (so the same answer is verified under one and violates the other).
RULE_SETS = {
    "A": _VOCAB + 'relation annual_leave_days(g: group, days: duration[day]) "annual leave" unique\n'
                  'pattern leave_en: "{d:duration} of annual leave" -> annual_leave_days(full_time, ?d)\n'
                  'rule LEAVE_MAX "annual leave is at most 30 days": if annual_leave_days(?g, ?d) and ?d > 30 day '
                  'then violation "annual leave cannot exceed 30 days"\n',
    "B": _VOCAB + 'relation leave_days(g: group, days: duration[day]) "annual leave" unique\n'
                  'pattern leave_en: "{d:duration} of annual leave" -> leave_days(full_time, ?d)\n'
                  'rule LEAVE_MAX "annual leave is at most 20 days": if leave_days(?g, ?d) and ?d > 20 day '
                  'then violation "annual leave cannot exceed 20 days"\n',
}


class FixedDraft:
    """A model that always drafts the same answer: no engine, so only the service's state is measured."""

    max_model_len = 4096

    def __init__(self, text: str = DRAFT) -> None:
        self.text = text
        self.tokenizer = _Words()

    def _out(self, prompt: Any) -> Any:
        ids = self.tokenizer.encode(self.text)
        return SimpleNamespace(text=self.text, token_ids=ids, prompt_token_ids=[1, 2, 3], delta_text=self.text,
                               finished=True, finish_reason="stop",
                               metrics=SimpleNamespace(ttft_s=0.001, e2e_s=0.002, prompt_tokens=3))

    def chat(self, messages: list[dict], sampling: Any = None) -> Any:
        return self._out(messages)

    def stream(self, prompt: Any, sampling: Any = None) -> Iterator[Any]:
        yield self._out(prompt)


class _Words:
    eos_token_ids = {0}

    def encode(self, text: str) -> list[int]:
        return [len(w) + 1 for w in text.split()]

    def decode(self, ids: list[int]) -> str:
        return " ".join("x" * (i - 1) for i in ids)

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        return "".join(f"<{m['role']}> {m['content']}\n" for m in messages)


def write_domain(root: Path) -> dict[str, Path]:
    kb, rules = root / "kb", root / "rules"
    for rel, text in KB.items():
        (kb / rel).parent.mkdir(parents=True, exist_ok=True)
        (kb / rel).write_text(text, encoding="utf-8")
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "leave.rules").write_text(RULE_SETS["A"], encoding="utf-8")
    return {"kb": kb, "rules": rules, "index": root / "index", "rule_file": rules / "leave.rules"}


def build_app(paths: dict[str, Path]) -> Any:
    """The real service (create_app) over the real index, rule-base holder and answer loop; only the model is
    the fixed draft."""
    from api.app import create_app
    from api.settings import Settings
    from retrieval import Retriever, ingest
    from symbolic import RuleBaseHolder

    ingest(paths["kb"], paths["index"], embedder="hashing")
    settings = Settings(kb_dir=paths["kb"], index_dir=paths["index"], rules_dir=paths["rules"],
                        admin_api_key=ADMIN, access_log="off", max_concurrent_asks=64)
    return create_app(settings, retriever=Retriever.open(paths["index"]),
                      rulebase_holder=RuleBaseHolder(paths["rules"]), generator=FixedDraft())


@contextmanager
def serve(app: Any) -> Iterator[str]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


def signature(endpoint: str, body: dict) -> str:
    """What must not change within one state: status, answer, each claim's relation and verdict, the rules
    violated (never timings or ids)."""
    claims = sorted((c.get("text", ""), c.get("relation") or "", c.get("verdict", "")) for c in body.get("claims", []))
    violations = sorted(str(v.get("rule_id")) for v in body.get("violations", []))
    answer = body.get("answer", "") if endpoint == "/ask" else ""
    proof = (body.get("proof") or {}).get("relation")
    return json.dumps([endpoint, body.get("status"), answer, claims, violations, proof])


REQUESTS = {"/ask": {"question": QUESTION, "max_tokens": 32, "proof_first": False},  # the model drafts: state it reads
            "/verify": {"question": QUESTION, "answer": ANSWER}}


def set_rules(rule_file: Path, name: str) -> None:
    """Replace the rule file atomically (a reload never reads half a file: that is another test)."""
    tmp = rule_file.with_name(f".{rule_file.name}.tmp")
    tmp.write_text(RULE_SETS[name], encoding="utf-8")
    os.replace(tmp, rule_file)


def reload(http: httpx.Client) -> dict:
    r = http.post("/rules/reload", headers={"X-API-Key": ADMIN})
    if r.status_code != 200:
        raise RuntimeError(f"reload failed: {r.status_code} {r.text}")
    return r.json()


def expected_results(url: str, rule_file: Path) -> dict[str, dict[str, Any]]:
    """Each rule set's signatures (per endpoint) and the rules_version the server reports for it (if any)."""
    out: dict[str, dict[str, Any]] = {}
    with httpx.Client(base_url=url, timeout=60) as http:
        for name in RULE_SETS:
            set_rules(rule_file, name)
            reload(http)
            sigs, version = {}, None
            for endpoint, payload in REQUESTS.items():
                r = http.post(endpoint, json=payload)
                r.raise_for_status()
                sigs[endpoint] = signature(endpoint, r.json())
                version = r.json().get("rules_version")
            out[name] = {"signatures": sigs, "rules_version": version}
    if all(out["A"]["signatures"][e] == out["B"]["signatures"][e] for e in REQUESTS):
        raise RuntimeError("the two rule sets give the same results: the storm could not tell them apart")
    return out


@dataclass
class StormReport:
    requests: int = 0
    reloads: int = 0
    by_result: Counter = field(default_factory=Counter)   # "A" | "B" | "neither" | "error:<status>"
    version_mismatch: int = 0    # matched a set, but not the one its rules_version names
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    @property
    def mixed(self) -> int:
        return self.by_result["neither"] + self.version_mismatch

    def to_dict(self) -> dict:
        return {"requests": self.requests, "reloads": self.reloads, "by_result": dict(self.by_result),
                "version_mismatch": self.version_mismatch, "mixed": self.mixed, "seconds": round(self.seconds, 1)}


def storm(url: str, rule_file: Path, expected: dict[str, dict[str, Any]], *, clients: int = 8,
          seconds: float = 20.0, interval: float = 0.2) -> StormReport:
    report = StormReport()
    lock = threading.Lock()
    stop = threading.Event()
    by_version = {e["rules_version"]: name for name, e in expected.items() if e["rules_version"]}

    def reloader() -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            k = 0
            while not stop.is_set():
                k += 1
                set_rules(rule_file, "AB"[k % 2])
                reload(http)
                with lock:
                    report.reloads += 1
                stop.wait(interval)

    def client(i: int) -> None:
        endpoints = list(REQUESTS)
        with httpx.Client(base_url=url, timeout=60) as http:
            k = i
            while not stop.is_set():
                endpoint = endpoints[k % len(endpoints)]
                k += 1
                r = http.post(endpoint, json=REQUESTS[endpoint])
                if r.status_code != 200:
                    kind, mismatch = f"error:{r.status_code}", False
                else:
                    sig = signature(endpoint, r.json())
                    kind = next((n for n, e in expected.items() if e["signatures"][endpoint] == sig), "neither")
                    named = by_version.get(r.json().get("rules_version"))
                    mismatch = kind != "neither" and named is not None and named != kind
                with lock:
                    report.requests += 1
                    report.by_result[kind] += 1
                    report.version_mismatch += mismatch
                    if (kind == "neither" or mismatch) and len(report.examples) < 3:
                        report.examples.append(sig if r.status_code == 200 else r.text[:200])

    t0 = time.perf_counter()
    threads = [threading.Thread(target=reloader)] + [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(120)
    report.seconds = time.perf_counter() - t0
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between reloads")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import logging
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_domain(Path(tmp))
        with serve(build_app(paths)) as url:
            expected = expected_results(url, paths["rule_file"])
            report = storm(url, paths["rule_file"], expected, clients=args.clients, seconds=args.seconds,
                           interval=args.interval)
    print(json.dumps({"clients": args.clients, "interval_s": args.interval, **report.to_dict(),
                      "examples": report.examples}, indent=1))
    return 0 if report.mixed == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
