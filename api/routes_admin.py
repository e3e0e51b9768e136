"""Admin endpoints (the admin key, always): rules listing and hot reload, document ingest and delete."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from api.errors import ApiError
from api.schemas import ErrorResponse, IngestRequest, IngestResponse, ReloadResponse, RulesResponse
from api.security import confine, require_admin_key
from api.strict_json import JSONRoute
from api.state import ServiceState

router = APIRouter(route_class=JSONRoute, dependencies=[Security(require_admin_key)], tags=["admin"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 409, 413, 422, 503)
}


def _admin(request: Request) -> ServiceState:
    return request.app.state.svc  # the router's dependency has checked the admin key


def _rules_holder(state: ServiceState) -> Any:
    if state.rules is None:
        raise HTTPException(503, "no rules directory configured")
    return state.rules


def _rule_row(rule: Any) -> dict:
    loc = getattr(rule, "location", None)
    return {"id": str(getattr(rule, "id", "?")), "message": getattr(rule, "message", None),
            "location": None if loc is None else str(loc),
            "kind": getattr(rule, "kind", None) if isinstance(getattr(rule, "kind", None), str) else None}


@router.get("/rules", response_model=RulesResponse, responses=_ERRORS, summary="Loaded rules (admin)")
async def list_rules(request: Request) -> dict:
    holder = _rules_holder(_admin(request))
    rules = list(getattr(holder.current, "rules", []) or [])
    return {"count": len(rules), "rules": [_rule_row(r) for r in rules]}


@router.post("/rules/reload", response_model=ReloadResponse, responses=_ERRORS,
             summary="Reload the rule files; on error the old rules keep being served (admin)")
async def reload_rules(request: Request) -> Any:
    holder = _rules_holder(_admin(request))
    errors = await run_in_threadpool(holder.reload)
    count = len(getattr(holder.current, "rules", []) or [])
    version = getattr(holder.current, "version", None) or None
    if errors:
        return JSONResponse({"reloaded": False, "count": count, "errors": [str(e) for e in errors],
                             "rules_version": version}, 422)
    state = _admin(request)
    if state.on_rules_reloaded is not None:  # replicas: the others follow within replica_sync_s
        await run_in_threadpool(state.on_rules_reloaded)
    return {"reloaded": True, "count": count, "errors": [], "rules_version": version}


def _kb(state: ServiceState) -> tuple[Path, Any]:
    s = state.settings
    if s.kb_dir is None or s.resolved_index_dir is None or state.retriever is None or state.kb_sync is None:
        raise HTTPException(503, "no knowledge base configured")
    return s.kb_dir, state.kb_sync


def _confine(kb: Path, user_path: str) -> Path:
    try:
        return confine(kb, user_path)
    except FileNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except OSError as exc:  # name too long, not a directory, ...: the caller's path is unusable
        raise HTTPException(422, f"invalid path: {exc.strerror or exc}") from None


async def _ingest(sync: Any, rel: str, reason: str) -> Any:
    """Ingest only ``rel`` (a file or folder; '.' the whole KB) and serve the new version; 409 while another
    ingest runs (its progress is in /readyz)."""
    from api.kb_sync import IngestBusy

    try:
        return await run_in_threadpool(sync.ingest, [rel], reason=reason)
    except IngestBusy as exc:
        raise ApiError(409, str(exc), code="ingest_running", headers={"Retry-After": "5"}) from None


@router.post("/documents", response_model=IngestResponse, responses=_ERRORS,
             summary="Ingest a file or folder inside the KB root; only it is read again (admin)")
async def ingest_documents(body: IngestRequest, request: Request) -> dict:
    state = _admin(request)
    kb, sync = _kb(state)
    target = _confine(kb, body.path)
    rel = target.relative_to(kb.resolve()).as_posix() or "."
    report = await _ingest(sync, rel, f"POST /documents {rel}")
    return {"path": rel, "documents": report.num_documents, "chunks": report.num_chunks,
            "added": report.added, "updated": report.updated, "removed": report.removed,
            "errors": [f"{path}: {reason}" for path, reason in report.skipped if _under(path, rel)],
            "index_version": report.version}


def _under(path: str, rel: str) -> bool:
    return rel == "." or path == rel or path.startswith(rel + "/")


@router.delete("/documents/{doc_id:path}", responses=_ERRORS,
               summary="Remove a document (file under the KB root) and re-index it alone (admin)")
async def delete_document(doc_id: str, request: Request) -> dict:
    state = _admin(request)
    kb, sync = _kb(state)
    target = _confine(kb, doc_id)
    if not target.is_file():
        raise HTTPException(422, f"{doc_id!r} is not a document file")
    rel = target.relative_to(kb.resolve()).as_posix()
    target.unlink()
    report = await _ingest(sync, rel, f"DELETE /documents/{rel}")
    return {"deleted": doc_id, "index_version": report.version}
