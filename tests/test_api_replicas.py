"""`verirag serve --replicas`: two Ray Serve replicas on a local Ray cluster started once for the module, each
loading tests/ray_support.py's components (fake engine, real index and rules). Both answer through Ray's
proxy with the same routes, auth and schemas; rule reloads and ingests reach both; killing one replica's
process fails only what was in flight on it (a JSON 503), Ray restarts it; a replica that cannot load is
reported by Ray while the other keeps answering; a deployment where none can load fails with Ray's reason.
"""
from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from api_support import free_port
from ray_support import GOOD_RULES, POISON, in_flight_dir, make_domain

from api import ray_deploy
from api.app import create_app
from api.settings import Settings

KEY, ADMIN = "ask-key-123", "admin-key-456"
TESTS = str(Path(__file__).resolve().parent)
pytestmark = [pytest.mark.slow,  # a Ray cluster
              pytest.mark.filterwarnings("ignore:Using extra keyword arguments on `Field`")]  # in Ray's own code


@dataclass
class Cluster:
    url: str
    settings: Settings
    domain: dict[str, Path]
    http: httpx.Client

    def by_replica(self, path: str, want: int = 2, **kw: object) -> dict[str, httpx.Response]:
        """GET path until `want` distinct replicas answered it (Ray spreads requests between them)."""
        seen: dict[str, httpx.Response] = {}
        deadline = time.time() + 30
        while len(seen) < want and time.time() < deadline:
            r = self.http.get(path, **kw)  # type: ignore[arg-type]
            seen[r.headers.get("x-verirag-replica", "?")] = r
        assert len(seen) >= want, f"only replicas {list(seen)} answered {path}"
        return seen

    def wait_running(self, n: int, timeout: float = 180) -> ray_deploy.DeploymentState:
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = ray_deploy.deployment_state()
            if state is not None and state.running == n and state.total == n:
                return state
            time.sleep(0.5)
        raise AssertionError(f"deployment not back to {n} running replicas: {ray_deploy.deployment_state()}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    domain = make_domain(tmp_path_factory.mktemp("replicas"))
    settings = Settings(host="127.0.0.1", port=free_port(), kb_dir=domain["kb"], index_dir=domain["index"],
                        rules_dir=domain["rules"], replicas=2, replica_cpus=0.5, max_ongoing_requests=2,
                        api_key=KEY, admin_api_key=ADMIN, replica_sync_s=0.3, replica_health_check_s=1,
                        access_log="off", log_level="warning")
    local = ray_deploy.connect(settings, num_cpus=2, pythonpath=[TESTS])
    try:
        ray_deploy.deploy(settings, "ray_support:build", timeout_s=180)
        c = Cluster(f"http://127.0.0.1:{settings.port}", settings, domain,
                    httpx.Client(base_url=f"http://127.0.0.1:{settings.port}", timeout=60))
        c.wait_running(2)
        yield c
    finally:
        ray_deploy.shutdown(local)
    # a Ray call left running after the app stopped never starts a stray cluster, whose loss would end this
    # process 60 s later (Ray's GCS client exits with status 1)
    import ray

    assert not [t for t in threading.enumerate() if t.name.startswith("verirag-serve-run")]
    time.sleep(2)
    assert not ray.is_initialized()


def _ask(c: Cluster, **body: object) -> httpx.Response:
    return c.http.post("/ask", json={"question": "How many days of leave?", "max_tokens": 4, "policy": "flag",
                                     **body}, headers={"x-api-key": KEY})


def test_both_replicas_answer_with_the_api_of_verirag_serve(cluster: Cluster) -> None:
    seen = {}
    for _ in range(40):
        r = _ask(cluster)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["answer"] == "abcd" and body["status"] == "verified"
        assert r.headers.get_list("x-request-id") == [body["request_id"]]  # one id, the body's
        seen[r.headers["x-verirag-replica"]] = r
        if len(seen) == 2:
            break
    assert len(seen) == 2
    # same routes and schemas as the single-process app
    assert cluster.http.get("/openapi.json").json() == create_app(Settings()).openapi()
    # same auth and error bodies
    r = cluster.http.post("/ask", json={"question": "x"})
    assert r.status_code == 401 and r.json()["error"]["request_id"] == r.headers["x-request-id"]
    r = _ask(cluster, question="")
    assert r.status_code == 422 and "question" in r.json()["error"]["message"]
    assert cluster.http.get("/rules").status_code == 401
    ready = cluster.by_replica("/readyz")
    assert {rid: r.json()["replica"]["id"] for rid, r in ready.items()} == {rid: rid for rid in ready}
    assert all(r.json()["ready"] and r.json()["replica"]["index_version"] == "v000001" for r in ready.values())


def test_a_rule_reload_reaches_both_replicas(cluster: Cluster) -> None:
    admin = {"x-api-key": ADMIN}
    (cluster.domain["rules"] / "a.rules").write_text(GOOD_RULES + 'rule F2 "second": if p(?x) then violation "y"\n',
                                                     encoding="utf-8")
    r = cluster.http.post("/rules/reload", headers=admin)
    assert r.status_code == 200 and r.json() == {"reloaded": True, "count": 2, "errors": [],
                                                 "rules_version": r.json()["rules_version"]}
    assert len(r.json()["rules_version"]) == 12      # the content hash of the rule files now served
    deadline = time.time() + 10
    while time.time() < deadline:
        counts = {rid: r.json()["count"] for rid, r in cluster.by_replica("/rules", headers=admin).items()}
        if set(counts.values()) == {2}:
            break
        time.sleep(0.2)
    assert set(counts.values()) == {2}, counts
    tokens = {r.json()["replica"]["rules_generation"] for r in cluster.by_replica("/readyz").values()}
    assert len(tokens) == 1 and None not in tokens


def test_an_ingest_reaches_both_replicas(cluster: Cluster) -> None:
    (cluster.domain["kb"] / "remote.md").write_text("Employees may work remotely two days a week.\n", encoding="utf-8")
    r = cluster.http.post("/documents", json={"path": "remote.md"}, headers={"x-api-key": ADMIN})
    assert r.status_code == 200 and r.json()["added"] == ["remote.md"]
    current = (cluster.domain["index"] / "CURRENT").read_text().strip()
    assert current == "v000002"
    deadline = time.time() + 10
    while time.time() < deadline:
        versions = {rid: r.json()["replica"]["index_version"] for rid, r in cluster.by_replica("/readyz").items()}
        if set(versions.values()) == {current}:
            break
        time.sleep(0.2)
    assert set(versions.values()) == {current}, versions


def _replica_pids(cluster: Cluster) -> dict[str, int]:
    return {rid: r.json()["replica"]["pid"] for rid, r in cluster.by_replica("/readyz").items()}


async def _load(cluster: Cluster, n: int, concurrency: int, victim_pid: int) -> tuple[dict[str, tuple], set[str]]:
    """n /ask requests of ~1 s each (100 tokens at 10 ms) at the given concurrency; once the victim process is
    answering some of them, SIGKILL it. Returns each question's (status, replica, body) and the questions
    that were in flight on the victim when it was killed."""
    results: dict[str, tuple] = {}
    killed_during: set[str] = set()
    notes = in_flight_dir(cluster.domain["kb"].parent) / str(victim_pid)
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=cluster.url, timeout=60, headers={"x-api-key": KEY}) as client:
        async def one(i: int) -> None:
            async with gate:
                q = f"question {i}"
                r = await client.post("/ask", json={"question": q, "max_tokens": 100, "policy": "flag"})
                results[q] = (r.status_code, r.headers.get("x-verirag-replica"), r.json())

        async def kill() -> None:
            # Ray hands a replica at most max_ongoing_requests at once: with that many noted, nothing else can
            # be in flight on it (a request Ray has handed over but whose note is not written yet would be)
            full, deadline = cluster.settings.max_ongoing_requests, time.time() + 20
            while len(killed_during) < full and time.time() < deadline:
                await asyncio.sleep(0.01)
                killed_during.clear()
                killed_during.update(p.name for p in notes.glob("*"))
            os.kill(victim_pid, signal.SIGKILL)

        await asyncio.gather(kill(), *(one(i) for i in range(n)))
    return results, killed_during


def test_killing_a_replica_fails_only_its_in_flight_requests_and_ray_restarts_it(cluster: Cluster) -> None:
    pids = _replica_pids(cluster)
    victim, survivor = sorted(pids)
    # 8 at a time against 2 replicas x max_ongoing_requests 2: 4 in flight, 4 queued in Ray's router at the kill
    results, in_flight = asyncio.run(_load(cluster, n=16, concurrency=8, victim_pid=pids[victim]))
    assert len(results) == 16 and len(in_flight) == cluster.settings.max_ongoing_requests
    failed = {q for q, (status, _, _) in results.items() if status != 200}
    # only requests in flight on the victim fail (one may have finished between the look and the kill)...
    assert failed and failed <= in_flight, (failed, in_flight)
    for q in failed:  # ...and cleanly: the API's JSON error, retryable
        status, _, body = results[q]
        assert status == 503 and body["error"]["type"] == "replica_lost" and body["error"]["request_id"]
    # every other one, queued at the time or sent later, is answered
    answered = {q: replica for q, (status, replica, body) in results.items() if status == 200 and body["answer"]}
    assert set(answered) == set(results) - failed and survivor in answered.values()
    cluster.wait_running(2)
    after = _replica_pids(cluster)
    assert survivor in after and victim not in after and len(after) == 2  # Ray started a new replica


def test_a_replica_that_cannot_load_is_reported_and_the_other_keeps_answering(cluster: Cluster) -> None:
    poison = cluster.domain["kb"].parent / POISON
    pids = _replica_pids(cluster)
    victim, survivor = sorted(pids)
    poison.write_text("x")
    try:
        os.kill(pids[victim], signal.SIGKILL)
        # a bound on waiting, not a speed: on a loaded 2-core machine Ray's restart attempts took over 60 s
        deadline, state = time.time() + 180, None
        while time.time() < deadline:
            state = ray_deploy.deployment_state()
            if state is not None and "cannot load the model" in state.message:
                break
            time.sleep(0.5)
        assert state is not None and "cannot load the model" in state.message, state
        # Ray's report, with the replica's traceback cut to the exception
        assert state.message.endswith("Error: RuntimeError: cannot load the model: cannot-load is set for this test")
        # one running; the others are starting or still stopping (Ray counts a dying replica until it is gone)
        assert state.running == 1 and state.total >= 2
        for _ in range(6):  # the deployment stays up: every request is answered, by the healthy replica
            r = _ask(cluster)
            assert r.status_code == 200 and r.headers["x-verirag-replica"] == survivor
    finally:
        poison.unlink()
    cluster.wait_running(2)  # Ray kept retrying: once the replica can load again, it is back


def test_a_deployment_where_no_replica_can_load_fails_with_rays_reason(cluster: Cluster) -> None:
    poison = cluster.domain["kb"].parent / POISON
    poison.write_text("x")
    try:
        broken = cluster.settings.model_copy(update={"replicas": 1, "replica_start_attempts": 1})
        with pytest.raises(ray_deploy.DeployFailedError,
                           match=r"failed to start .* Error: RuntimeError: cannot load the model: cannot-load is set"):
            ray_deploy.deploy(broken, "ray_support:build", app_name="broken", route_prefix="/broken", timeout_s=120)
    finally:
        poison.unlink()
    # the thread that ran serve.run for the failed app has ended with it: nothing polls Ray behind our back
    assert not [t for t in threading.enumerate() if t.name == "verirag-serve-run-broken"]
    assert _ask(cluster).status_code == 200  # the running app is untouched
