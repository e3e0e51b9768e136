"""Admin endpoints (the admin key, always): rules listing and hot reload, document ingest and delete."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from api.schemas import ErrorResponse, IngestRequest, IngestResponse, ReloadResponse, RulesResponse
from api.security import confine, require_admin_key
from api.state import ServiceState

router = APIRouter(dependencies=[Security(require_admin_key)], tags=["admin"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 403, 404, 413, 422, 503)
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


def _kb(state: ServiceState) -> tuple[Path, Path]:
    s = state.settings
    if s.kb_dir is None or s.resolved_index_dir is None or state.retriever is None:
        raise HTTPException(503, "no knowledge base configured")
    return s.kb_dir, s.resolved_index_dir  # type: ignore[return-value]


def _confine(kb: Path, user_path: str) -> Path:
    try:
        return confine(kb, user_path)
    except FileNotFoundError as exc:
        raise HTTPException(404, str(exc)) from None
    except OSError as exc:  # name too long, not a directory, ...: the caller's path is unusable
        raise HTTPException(422, f"invalid path: {exc.strerror or exc}") from None


def _reindex(state: ServiceState, kb: Path, index_dir: Path) -> Any:
    """Re-ingest the KB (the index is incremental on unchanged files) and swap the live retriever."""
    from retrieval import Retriever, ingest

    with state.ingest_lock:
        report = ingest(kb, index_dir)
        embedder = getattr(state.retriever, "embedder", None)  # loaded once: reused for the new version
        state.snapshots.swap_index(Retriever.open(index_dir, embedder=embedder))  # type: ignore[union-attr]
    return report


@router.post("/documents", response_model=IngestResponse, responses=_ERRORS,
             summary="Ingest a file or folder inside the KB root (admin)")
async def ingest_documents(body: IngestRequest, request: Request) -> dict:
    state = _admin(request)
    kb, index_dir = _kb(state)
    target = _confine(kb, body.path)
    report = await run_in_threadpool(_reindex, state, kb, index_dir)
    rel = target.relative_to(kb.resolve()).as_posix()
    return {"path": rel or ".", "documents": report.num_documents, "chunks": report.num_chunks,
            "added": report.added, "updated": report.updated, "removed": report.removed,
            "errors": [f"{path}: {reason}" for path, reason in report.skipped]}


@router.delete("/documents/{doc_id:path}", responses=_ERRORS,
               summary="Remove a document (file under the KB root) and re-index (admin)")
async def delete_document(doc_id: str, request: Request) -> dict:
    state = _admin(request)
    kb, index_dir = _kb(state)
    target = _confine(kb, doc_id)
    if not target.is_file():
        raise HTTPException(422, f"{doc_id!r} is not a document file")
    target.unlink()
    await run_in_threadpool(_reindex, state, kb, index_dir)
    return {"deleted": doc_id}
