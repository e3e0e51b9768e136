"""VerifiedRAGReplica: one Ray Serve replica, the same FastAPI app as `verirag serve` over its own components.

api/ray_deploy.py wraps this class with ``serve.ingress()`` and ``serve.deployment``; Ray is imported only
inside the replica, so `verirag serve` without replicas never needs it installed.
"""
from __future__ import annotations

import asyncio
import importlib
import logging
import os
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # kept out of the import: a replica that fails to load fails in seconds, not after torch
    from api.replica_sync import ReplicaSync
    from api.settings import Settings

log = logging.getLogger("verirag.replicas")
# what each replica loads: engine, index and rules from the settings (the same loader `verirag serve` uses)
DEFAULT_COMPONENTS = "api.state:build_components"


def import_components(spec: str) -> Callable[["Settings"], dict[str, Any]]:
    """'module:function' -> the function; it takes the settings and returns create_app's component kwargs."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"components must be 'module:function', got {spec!r}")
    return getattr(importlib.import_module(module), name)


class _ReplicaHeader:
    """Adds ``x-verirag-replica`` to every response: which replica answered (Ray's own logs name it too).
    Ray's proxy echoes the request's x-request-id itself: the app's copy of the same value is dropped so
    the response carries one (a client's unusable id, which the app replaces, keeps both: they differ)."""

    def __init__(self, app: Any, replica_id: str) -> None:
        self.app, self.header = app, (b"x-verirag-replica", replica_id.encode())

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        echoed = (b"x-request-id", dict(scope.get("headers") or []).get(b"x-request-id"))

        async def tagged(message: dict) -> None:
            if message["type"] == "http.response.start":
                kept = [h for h in message.get("headers", []) if (h[0].lower(), h[1]) != echoed]
                message = {**message, "headers": [*kept, self.header]}
            await send(message)

        await self.app(scope, receive, tagged)


class VerifiedRAGReplica:
    """Ray's late-bound ingress: ``__serve_build_asgi_app__`` loads this replica's components (a failure there
    is what Ray reports and retries) and builds the app inside the replica, so nothing of it is pickled;
    the replica then follows the index and rule reloads the other replicas publish."""

    def __init__(self, settings: "Settings", components: str = DEFAULT_COMPONENTS) -> None:
        from ray import serve

        from api.log_setup import configure_logging

        configure_logging(settings)  # this replica's access log and log level, as `verirag serve` sets its own
        self.settings, self.components = settings, components
        self.replica_id = serve.get_replica_context().replica_id.unique_id
        self.sync: "ReplicaSync | None" = None
        self.state: Any = None

    async def __serve_build_asgi_app__(self) -> Any:
        from api.app import create_app
        from api.replica_sync import ReplicaSync

        build = import_components(self.components)
        # in a thread: the replica's event loop keeps answering Ray's calls while a model loads
        parts = await asyncio.to_thread(build, self.settings)
        app = create_app(self.settings, **parts, reingest_stale=True)  # a stale index serves while re-ingested
        self.state = state = app.state.svc
        self.sync = sync = ReplicaSync(state, self.settings.resolved_index_dir, self.settings.replica_sync_s)
        state.on_rules_reloaded = sync.publish_rules
        rid = self.replica_id
        state.replica_info = lambda: {"id": rid, "pid": os.getpid(), **sync.snapshot()}
        sync.start()
        app.add_middleware(_ReplicaHeader, replica_id=rid)
        log.info("replica %s serving (pid %d)", rid, os.getpid())
        return app

    async def check_health(self) -> None:
        """Ray calls this every health_check_period_s; raising makes Ray replace the replica."""
        engine = getattr(self.state, "async_engine", None)
        if engine is not None and not engine.alive:
            raise RuntimeError(f"replica {self.replica_id}: the engine loop stopped")

    def __del__(self) -> None:
        if getattr(self, "sync", None) is not None:
            self.sync.stop()  # type: ignore[union-attr]
