"""`verirag serve --replicas N`: bring the index up to date (the one writer), deploy N replicas on Ray Serve,
say on stderr how many answer and what Ray reports (a replica failing to load, one restarted), stop on
Ctrl-C or SIGTERM."""
from __future__ import annotations

import signal
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from api.ray_deploy import DeploymentState
    from api.settings import Settings


def _say(text: str) -> None:
    print(f"verirag serve: {text}", file=sys.stderr, flush=True)


def _report(state: "DeploymentState") -> None:
    line = (f"replicas: {state.running} running, {state.total - state.running} starting or stopping; "
            f"deployment {state.status}")
    _say(line + (f": {state.message.strip()}" if state.message else ""))


def _ingest_if_stale(settings: "Settings") -> None:
    """Replicas only open the index: an ingest, when the KB changed since the last one, happens here once
    (each replica would otherwise wait for the others' ingest lock to find nothing left to do)."""
    from retrieval import index_status, ingest

    if settings.kb_dir is not None and index_status(settings.kb_dir, settings.resolved_index_dir) != "fresh":
        _say(f"ingesting {settings.kb_dir} into {settings.resolved_index_dir}")
        ingest(settings.kb_dir, settings.resolved_index_dir)


def _raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def run_replicas(settings: "Settings", components: str | None = None) -> int:
    from api import ray_deploy
    from api.replica import DEFAULT_COMPONENTS
    from retrieval.errors import RetrievalError

    try:
        ray_deploy.require_ray()
    except ray_deploy.RayUnavailableError as exc:
        _say(f"error: {exc}")
        return 2
    try:
        _ingest_if_stale(settings)
    except RetrievalError as exc:
        _say(f"error: {exc}")
        return 1
    try:
        local = ray_deploy.connect(settings)
    except ray_deploy.RayUnavailableError as exc:
        _say(f"error: {exc}")
        return 1
    signal.signal(signal.SIGTERM, _raise_interrupt)  # a service manager's stop: remove the app, as Ctrl-C does
    stop = threading.Event()
    try:
        state = ray_deploy.deploy(settings, components or DEFAULT_COMPONENTS, report=_report)
        _say(f"{state.running} replica(s) answering at http://{settings.host}:{settings.port} "
             "(Ray Serve's proxy; each response names its replica in x-verirag-replica)")
        ray_deploy.watch(_report, stop)
    except ray_deploy.DeployFailedError as exc:
        _say(f"error: Ray could not start any replica: {exc}")
        return 1
    except KeyboardInterrupt:
        _say("stopping the replicas")
    finally:
        stop.set()
        ray_deploy.shutdown(local)
    return 0
