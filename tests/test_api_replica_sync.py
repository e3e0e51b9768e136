"""ReplicaSync without Ray: two services over one index and rule folder, as two replicas are. An ingest or a
published rule reload by one reaches the other at its next poll, swapped in whole; a bad new version
leaves the follower serving the old one and says why."""
from __future__ import annotations

from pathlib import Path

import pytest
from ray_support import GOOD_RULES, make_domain

from api.metrics import ServiceMetrics
from api.replica_sync import RULES_MARKER, ReplicaSync, read_current_version
from api.settings import Settings
from api.state import ServiceState
from retrieval import Retriever, ingest
from symbolic import RuleBaseHolder

TWO_RULES = GOOD_RULES + 'rule F2 "second": if p(?x) then violation "y"\n'


def _replica(domain: dict[str, Path]) -> tuple[ServiceState, ReplicaSync]:
    state = ServiceState(settings=Settings(), metrics=ServiceMetrics(lambda: None))
    state.use(Retriever.open(domain["index"]), RuleBaseHolder(domain["rules"]))
    return state, ReplicaSync(state, domain["index"], interval_s=60)


@pytest.fixture
def two(tmp_path):
    domain = make_domain(tmp_path)
    return domain, _replica(domain), _replica(domain)


def _rule_ids(state: ServiceState) -> list[str]:
    return [r.id for r in state.rules.current.rules]


def test_an_ingest_by_one_replica_reaches_the_other(two) -> None:
    domain, (a, sync_a), (b, sync_b) = two
    old = b.retriever.current
    (domain["kb"] / "remote.md").write_text("Employees may work remotely two days a week.\n", encoding="utf-8")
    report = ingest(domain["kb"], domain["index"])  # what replica a's POST /documents runs
    a.snapshots.swap_index(Retriever.open(domain["index"]))
    assert report.version == read_current_version(domain["index"]) == "v000002"
    assert b.retriever.current is old  # nothing moves before the poll
    sync_b.check_once()
    assert b.retriever.current.version == "v000002" and sync_b.reloads["index"] == 1
    assert {p.doc_id for p in b.retriever.search("remote work", top_k=5)} == {"remote.md", "leave.md"}
    assert b.retriever.current.embedder is old.embedder  # the embedder is reused, not loaded again
    sync_a.check_once()
    assert sync_a.reloads["index"] == 0  # the writer already serves what CURRENT names


def test_a_published_rule_reload_reaches_the_other_and_only_then(two) -> None:
    domain, (a, sync_a), (b, sync_b) = two
    (domain["rules"] / "a.rules").write_text(TWO_RULES, encoding="utf-8")
    sync_b.check_once()
    assert _rule_ids(b) == ["F1"]  # edited files alone change nothing: a reload is explicit, as in one server
    assert a.rules.reload() == []
    sync_a.publish_rules()  # what POST /rules/reload does after its own reload succeeded
    token = (domain["index"] / RULES_MARKER).read_text().strip()
    sync_a.check_once()
    assert sync_a.reloads["rules"] == 0  # its own publication is not reloaded twice
    sync_b.check_once()
    assert _rule_ids(b) == ["F1", "F2"] and sync_b.rules_token == token == sync_a.rules_token
    assert b.rules.generation == 2 and sync_b.last_error is None


def test_a_follower_that_cannot_load_the_new_rules_keeps_the_old_and_says_why(two) -> None:
    domain, (a, sync_a), (b, sync_b) = two
    before = b.rules.current
    sync_a.publish_rules()
    (domain["rules"] / "a.rules").write_text(GOOD_RULES + 'rule F3 "broken": if q(?x) then violation "z"\n',
                                             encoding="utf-8")
    sync_b.check_once()
    assert b.rules.current is before
    assert sync_b.last_error.startswith("rules: RuntimeError: rule reload published by another replica failed")
    assert "unknown relation 'q'" in sync_b.last_error and ":3:22" in sync_b.last_error
    sync_b.check_once()  # the same publication is not retried in a loop
    assert b.rules.generation == 1


def test_a_version_removed_under_the_follower_is_an_error_not_a_crash(two) -> None:
    domain, _, (b, sync_b) = two
    (domain["index"] / "CURRENT").write_text("v000009\n", encoding="utf-8")  # names a version that is not there
    old = b.retriever.current
    sync_b.check_once()
    assert b.retriever.current is old and sync_b.last_error.startswith("index: IndexCorruptError")
    assert sync_b.snapshot()["index_version"] == "v000001"


def test_the_poller_thread_follows_and_stops(two) -> None:
    domain, (a, sync_a), (b, _) = two
    fast = ReplicaSync(b, domain["index"], interval_s=0.02)
    fast.start()
    try:
        (domain["rules"] / "a.rules").write_text(TWO_RULES, encoding="utf-8")
        assert a.rules.reload() == []
        sync_a.publish_rules()
        import time

        deadline = time.time() + 5
        while _rule_ids(b) != ["F1", "F2"] and time.time() < deadline:
            time.sleep(0.02)
        assert _rule_ids(b) == ["F1", "F2"]
    finally:
        fast.stop()
    fast._thread.join(2)
    assert not fast._thread.is_alive()
