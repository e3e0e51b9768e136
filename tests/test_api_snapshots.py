"""One snapshot per request: a request is answered from the rule base, index version and KB facts it started
with, whatever reloads and ingests happen meanwhile, and its response names them; a reload that fails half-way
or two at once leave one consistent state serving. The domain and storm are bench/reload_storm.py's (a real
index with the hashing embedder, real rules and answer loop, a fixed draft for the model)."""
from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.append(str(BENCH))  # appended: bench/pipeline.py must not hide the package

import reload_storm as storm_kit  # noqa: E402
from reload_storm import ADMIN, REQUESTS, FixedDraft, set_rules, signature  # noqa: E402

ADMIN_H = {"X-API-Key": ADMIN}


class HeldDraft(FixedDraft):
    """The fixed draft, held at the first generation until the test lets it go (a request in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def chat(self, messages: list[dict], sampling: object = None) -> object:
        if not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(30), "the test never let the draft go"
        return super().chat(messages, sampling)


@pytest.fixture
def domain(tmp_path):
    return storm_kit.write_domain(tmp_path)


def _app(paths: dict, generator: object) -> object:
    from api.app import create_app
    from api.settings import Settings
    from retrieval import Retriever, ingest
    from symbolic import RuleBaseHolder

    ingest(paths["kb"], paths["index"], embedder="hashing")
    settings = Settings(kb_dir=paths["kb"], index_dir=paths["index"], rules_dir=paths["rules"], admin_api_key=ADMIN,
                        access_log="off")
    return create_app(settings, retriever=Retriever.open(paths["index"]), rulebase_holder=RuleBaseHolder(paths["rules"]),
                      generator=generator)


def test_a_request_keeps_its_state_through_a_reload_and_an_ingest(domain) -> None:
    draft = HeldDraft()
    app = _app(domain, draft)
    with storm_kit.serve(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        before = http.get("/readyz").json()
        draft.entered.set()                                             # not held: the old state's answer
        expected_a = signature("/ask", http.post("/ask", json=REQUESTS["/ask"]).json())
        draft.entered.clear()
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(http.post, "/ask", json=REQUESTS["/ask"])
            assert draft.entered.wait(30)
            set_rules(domain["rule_file"], "B")                     # the rules and the index change under it
            assert http.post("/rules/reload", headers=ADMIN_H).json()["reloaded"] is True
            (domain["kb"] / "hr" / "travel.md").write_text("# Travel\n\nTrains are booked in second class.\n")
            assert http.post("/documents", json={"path": "hr/travel.md"}, headers=ADMIN_H).status_code == 200
            after = http.get("/readyz").json()
            draft.release.set()
            held = pending.result().json()
        assert after["rules_version"] != before["rules_version"] and after["index_version"] != before["index_version"]
        assert (held["rules_version"], held["index_version"]) == (before["rules_version"], before["index_version"])
        assert signature("/ask", held) == expected_a                    # answered wholly from the old state
        fresh = http.post("/ask", json=REQUESTS["/ask"]).json()
        assert (fresh["rules_version"], fresh["index_version"]) == (after["rules_version"], after["index_version"])
        assert signature("/ask", fresh) != expected_a


def test_a_reload_that_fails_half_way_keeps_the_previous_snapshot(domain, monkeypatch) -> None:
    app = _app(domain, FixedDraft())
    store = app.state.svc.snapshots
    with storm_kit.serve(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        before = http.post("/verify", json=REQUESTS["/verify"]).json()

        def unreadable(retriever: object, rulebase: object) -> object:
            raise OSError("chunk store unreadable")

        monkeypatch.setattr(store, "read_facts", unreadable)  # the new rules load; their facts cannot be read
        set_rules(domain["rule_file"], "B")
        r = http.post("/rules/reload", headers=ADMIN_H)
        assert r.status_code == 422 and r.json()["reloaded"] is False
        assert "chunk store unreadable" in r.json()["errors"][0] and "previous rules keep serving" in r.json()["errors"][0]
        assert r.json()["rules_version"] == before["rules_version"]
        assert store.last_error.startswith("rules: ") and "chunk store unreadable" in store.last_error
        ready = http.get("/readyz").json()
        assert ready["rules_version"] == before["rules_version"] and "chunk store unreadable" in ready["snapshot_error"]
        again = http.post("/verify", json=REQUESTS["/verify"]).json()
        assert signature("/verify", again) == signature("/verify", before)
        assert again["rules_version"] == before["rules_version"]


def test_two_reloads_at_once_leave_one_consistent_snapshot(domain) -> None:
    app = _app(domain, FixedDraft())
    svc = app.state.svc
    with storm_kit.serve(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        set_rules(domain["rule_file"], "B")
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: http.post("/rules/reload", headers=ADMIN_H), range(2)))
        assert [r.status_code for r in results] == [200, 200]
        snap = svc.snapshots.current
        assert snap.rulebase is svc.snapshots.holder.current and svc.snapshots.holder.generation == 3
        assert snap.kb is not None and {f.relation for f in snap.kb.facts} == {"leave_days"}  # read with B
        body = http.post("/verify", json=REQUESTS["/verify"]).json()
        assert body["rules_version"] == snap.rules_version and body["claims"][0]["relation"] == "leave_days"


def test_the_kb_fact_cache_is_keyed_by_versions_never_ids(domain) -> None:
    """Facts read with one rule set are never handed to another, even where the new rule base gets the freed
    one's id (the cause of mixed answers under reloads)."""
    from pipeline.evidence.kb_facts import KBFactCache
    from retrieval import Retriever, ingest
    from symbolic import load_rulebase

    ingest(domain["kb"], domain["index"], embedder="hashing")
    retriever, cache = Retriever.open(domain["index"]), KBFactCache()
    rb_a = load_rulebase(domain["rules"])
    assert cache.key(retriever, rb_a) == (retriever.version, rb_a.version)
    assert {f.relation for f in cache.get(retriever, rb_a).facts} == {"annual_leave_days"}
    del rb_a
    set_rules(domain["rule_file"], "B")
    rb_b = load_rulebase(domain["rules"])
    assert {f.relation for f in cache.get(retriever, rb_b).facts} == {"leave_days"}

    class Unversioned:    # no version: the object itself is the key, held, so its id cannot be reused
        passages = retriever.passages

    plain = Unversioned()
    assert cache.key(plain, rb_b)[0] is plain


@pytest.mark.slow
def test_reload_storm_gives_no_mixed_answers(domain) -> None:
    """8 clients asking (/ask, /verify) while the rules flip between two sets every 200 ms for 20 s."""
    app = storm_kit.build_app(domain)
    with storm_kit.serve(app) as url:
        expected = storm_kit.expected_results(url, domain["rule_file"])
        assert all(e["rules_version"] for e in expected.values())
        report = storm_kit.storm(url, domain["rule_file"], expected, clients=8, seconds=20, interval=0.2)
    assert report.mixed == 0, (report.to_dict(), report.examples)
    assert report.by_result["A"] > 20 and report.by_result["B"] > 20 and report.reloads >= 40
    assert report.requests == report.by_result["A"] + report.by_result["B"]     # no errors either
