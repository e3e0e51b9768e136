"""create_app: the FastAPI application factory (components, middleware, error handlers, routes)."""
from __future__ import annotations

import json
import logging
import threading
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from api.access import AccessMiddleware
from api.docs import STATIC_URL, install_docs
from api.errors import install_error_handlers
from api.metrics import ServiceMetrics
from api.security import RequestGuard
from api.settings import Settings
from api.state import ServiceState, build_components
from neural.async_engine import AsyncEngine, EngineClient

log = logging.getLogger("verirag.api")


class _CrashGuard:
    """Turns any unhandled exception into a generic 500 with the request id (the traceback goes to the
    server log only), and keeps the connection usable (Starlette's own 500 path re-raises)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracking_send(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            rid = (scope.get("state") or {}).get("request_id")
            log.error("unhandled error (request %s)", rid, exc_info=exc)
            if started:  # mid-stream: nothing sensible can be sent any more
                return
            body = json.dumps({"error": {"type": "internal_error", "message": "internal error",
                                         "request_id": rid}}).encode()
            await send({"type": "http.response.start", "status": 500,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})


class _LoadingGate:
    """While `verirag serve` is still loading its components: 503 with Retry-After for everything but the
    operational endpoints, which answer (/healthz 200, /readyz 503 with the stage being loaded), and /verify
    once the index and rules are in (it needs no model)."""

    OPEN = {"/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", "/docs/oauth2-redirect", "/redoc"}

    def __init__(self, app: Any, state: ServiceState, retry_after_s: int) -> None:
        self.app, self.state, self.retry_after = app, state, str(retry_after_s)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if (scope["type"] != "http" or path in self.OPEN or path.startswith(STATIC_URL + "/")
                or not (self.state.loading or self.state.load_error)
                or (path == "/verify" and self.state.checker is not None)):  # needs no model: served already
            return await self.app(scope, receive, send)
        if self.state.load_error:
            kind, message = "unavailable", f"loading failed: {self.state.load_error}"
        else:
            stage = getattr(self.state.load_progress, "current", None)
            kind, message = "loading", f"the server is still loading ({stage or 'starting'})"
        body = json.dumps({"error": {"type": kind, "message": message, "request_id": None}}).encode()
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"retry-after", self.retry_after.encode())]})
        await send({"type": "http.response.body", "body": body})


def attach_knowledge(state: ServiceState, retriever: Any, rulebase_holder: Any, *, build: bool = True) -> None:
    """Serve the index and rules through one snapshot store (api/snapshot.py). ``build``: the service runs the
    answer loop itself (not an injected answerer), so each snapshot carries the KB facts read with its rules,
    and /verify is served at once by a checker that needs no model."""
    cache = None
    if build and retriever is not None and rulebase_holder is not None:
        from pipeline.evidence.kb_facts import KBFactCache

        cache = KBFactCache()    # each snapshot's facts are read into it before the snapshot serves
    state.use(retriever, rulebase_holder, cache.get if cache is not None else None)
    state.facts_cache = cache
    settings = state.settings
    if retriever is not None and settings.kb_dir is not None and settings.resolved_index_dir is not None:
        from api.kb_sync import KBSync

        state.kb_sync = KBSync(state, settings.kb_dir, settings.resolved_index_dir)
    if cache is not None:
        from pipeline import Answerer, AnswererConfig

        state.checker = _with_snapshot_facts(
            Answerer(None, state.retriever, state.rules, AnswererConfig(lm_extraction=False)), state)  # type: ignore[arg-type]


def _with_snapshot_facts(answerer: Any, state: ServiceState) -> Any:
    """The answer loop reads KB facts through the request's snapshot (its own cache would read them again)."""
    from api.snapshot import SnapshotFacts

    answerer.kb_facts = SnapshotFacts(state.snapshots, state.facts_cache)  # type: ignore[arg-type]
    return answerer


def attach_components(state: ServiceState, *, answerer: Any = None, engine: Any = None,
                      async_engine: AsyncEngine | None = None, retriever: Any = None,
                      rulebase_holder: Any = None, generator: Any = None) -> None:
    """Wire loaded components into the state (at creation, or from `verirag serve`'s loading thread, which may
    have attached the index and rules already: attach_knowledge); the answerer goes in last: it is what /ask
    waits for. ``generator``: a remote one (neural.remote), in place of a local engine."""
    owns = async_engine is None and engine is not None
    if owns:
        async_engine = AsyncEngine(engine, max_pending=state.settings.max_pending)
    if generator is None and async_engine is not None:
        generator = EngineClient(async_engine)
    if state.snapshots is None:
        attach_knowledge(state, retriever, rulebase_holder, build=answerer is None and generator is not None)
    if answerer is None and generator is not None and state.facts_cache is not None:
        from pipeline import Answerer

        answerer = _with_snapshot_facts(Answerer(generator, state.retriever, state.rules), state)  # type: ignore[arg-type]
    state.async_engine, state.owns_engine = async_engine, owns
    state.remote = generator if getattr(generator, "is_remote", False) else None
    state.answerer = answerer


def create_app(settings: Settings | None = None, *, answerer: Any = None, engine: Any = None,
               async_engine: AsyncEngine | None = None, retriever: Any = None,
               rulebase_holder: Any = None, build_missing: bool = False, load_in_background: bool = False,
               on_load_failure: Any = None, generator: Any = None, reingest_stale: bool | None = None) -> FastAPI:
    """Build the app. Components not passed are loaded from the settings when build_missing is True
    (what `verirag serve` does); tests inject small fakes or the real components directly.
    ``load_in_background``: return at once and load them in a thread started with the app (the port is
    served meanwhile: /healthz 200, /readyz 503 with the stage, the rest 503 + Retry-After);
    ``on_load_failure(exc)`` is called from that thread if loading fails. ``generator``: the answer loop's
    model when it is not a local engine (a neural.remote.RemoteGenerator). ``reingest_stale`` (default: with
    build_missing): once serving, check the index against the KB and re-ingest it in the background if stale."""
    settings = settings or Settings()
    state: ServiceState
    metrics = ServiceMetrics(lambda: state.async_engine.metrics() if state.async_engine is not None else None)
    state = ServiceState(settings=settings, metrics=metrics, model_name=str(settings.model or "SmolLM2-135M-Instruct"))
    loader = None
    reingest = build_missing if reingest_stale is None else reingest_stale
    if build_missing and engine is None and async_engine is None and generator is None:
        if load_in_background:
            from neural.load_progress import LoadProgress

            state.load_progress = LoadProgress()

            def loader() -> None:
                try:
                    built = build_components(settings, state.load_progress, on_knowledge=lambda r, h: (
                        None if retriever is not None or rulebase_holder is not None or answerer is not None
                        else attach_knowledge(state, r, h)))
                    attach_components(state, answerer=answerer, engine=built.get("engine"),
                                      generator=built.get("generator"),
                                      retriever=retriever if retriever is not None else built.get("retriever"),
                                      rulebase_holder=rulebase_holder if rulebase_holder is not None
                                      else built.get("rulebase_holder"))
                    if reingest and state.kb_sync is not None:  # served as it is; re-ingested meanwhile if stale
                        state.kb_sync.start_background()
                except Exception as exc:  # noqa: BLE001 - reported on /readyz and to the caller
                    state.load_error = f"{type(exc).__name__}: {exc}"
                    log.error("loading failed: %s", state.load_error)
                    if on_load_failure is not None:
                        on_load_failure(exc)
        else:
            built = build_components(settings)
            engine, generator = built.get("engine"), built.get("generator")
            retriever = retriever if retriever is not None else built.get("retriever")
            rulebase_holder = rulebase_holder if rulebase_holder is not None else built.get("rulebase_holder")
    if loader is None:
        attach_components(state, answerer=answerer, engine=engine, async_engine=async_engine, retriever=retriever,
                          rulebase_holder=rulebase_holder, generator=generator)

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        state.open()
        if loader is not None and state.async_engine is None and state.load_error is None:
            threading.Thread(target=loader, name="verirag-load", daemon=True).start()
        elif loader is None and reingest and state.kb_sync is not None and state.kb_sync.thread is None:
            state.kb_sync.start_background()
        yield
        state.close()

    app = FastAPI(title="verirag", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Neuro-symbolic RAG: answers verified against documents and rules.")
    install_docs(app)  # Swagger UI and ReDoc from local files: /docs works offline
    app.state.svc = state
    install_error_handlers(app, settings.retry_after_s)
    from api import routes_admin, routes_ask, routes_openai, routes_verify

    app.include_router(routes_ask.router)
    app.include_router(routes_verify.router)
    app.include_router(routes_openai.router)
    app.include_router(routes_admin.router)
    app.add_middleware(_CrashGuard)
    if loader is not None:
        app.add_middleware(_LoadingGate, state=state, retry_after_s=settings.retry_after_s)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["content-type", "x-api-key", "authorization", "x-request-id"])
    app.add_middleware(RequestGuard, max_body_bytes=settings.max_request_bytes, body_timeout_s=settings.body_timeout_s)
    app.add_middleware(AccessMiddleware, metrics=metrics, access_log=settings.access_log)  # outermost: sees all
    return app
