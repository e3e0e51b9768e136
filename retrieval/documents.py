"""Knowledge-base loading: walking the folder safely, decoding (PDF, HTML), front matter, language guess."""
from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from .errors import DocumentError, PathRefusedError
from .docx_text import docx_to_text
from .html_text import html_meta, html_to_text
from .pdf_text import pdf_to_text
from .records import Document, DocumentMeta
from .supersession import find_banner

log = logging.getLogger(__name__)

KINDS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".html": "html", ".htm": "html",
         ".pdf": "pdf", ".docx": "docx"}
# documents of a kind no loader reads: listed among the refused files with the reason, never silently passed over
# (images, data files and the like are not documents: those are passed over)
UNSUPPORTED_DOCUMENTS = frozenset({".doc", ".docm", ".dot", ".dotx", ".rtf", ".odt", ".xls", ".xlsx", ".ods", ".ppt",
                                   ".pptx", ".odp", ".pages", ".epub"})
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.S)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


@dataclass
class LoadLimits:
    max_file_bytes: int = 10 * 1024 * 1024
    max_files: int = 200_000


def _check_inside(root: Path, path: Path) -> None:
    """Refuse symlinks anywhere under the root and anything resolving outside it."""
    rel = path.relative_to(root) if path.is_absolute() else path
    cur = root
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            raise PathRefusedError(f"{rel.as_posix()}: symlinks are refused in a knowledge base")
    try:
        (root / rel).resolve().relative_to(root)
    except ValueError:
        raise PathRefusedError(f"{rel.as_posix()}: path resolves outside the knowledge-base root") from None


def normalize_doc_id(doc_id: str) -> str:
    """A doc id as written in front matter ('./a/b.md', 'a\\b.md') -> 'a/b.md'; refuses escapes."""
    p = PurePosixPath(doc_id.strip().replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise PathRefusedError(f"document id {doc_id!r} must be a relative path inside the knowledge base")
    return p.as_posix().removeprefix("./")


def guess_language(text: str) -> str:
    """'zh' when CJK characters make up a large share of the letters, else 'en' (a heuristic)."""
    sample = text[:4000]
    cjk = len(_CJK.findall(sample))
    letters = sum(ch.isalpha() for ch in sample)
    return "zh" if letters and cjk / letters > 0.3 else "en"


def _meta_str(fm: dict, key: str, doc_id: str) -> str | None:
    v = fm.get(key)
    if v is None:
        return None
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    if isinstance(v, (str, int, float)):
        return str(v).strip() or None
    raise DocumentError(f"{doc_id}: front matter '{key}' must be a string, got {type(v).__name__}")


def parse_front_matter(text: str, doc_id: str) -> tuple[dict, int]:
    """Return (front-matter mapping, offset where the body starts). No front matter -> ({}, 0)."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, 0
    try:
        fm = yaml.safe_load(m.group(1) or "") or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise DocumentError(f"{doc_id}: invalid YAML front matter{where}: {getattr(exc, 'problem', exc)}") from None
    except (ValueError, OverflowError) as exc:  # a well-formed scalar YAML cannot build: a date 2025-13-40
        raise DocumentError(f"{doc_id}: invalid YAML front matter: {exc}") from None
    if not isinstance(fm, dict):
        raise DocumentError(f"{doc_id}: front matter must be a mapping of keys to values")
    return fm, m.end()


def decode(raw: bytes, doc_id: str) -> str:
    if b"\x00" in raw[:8192]:
        raise DocumentError(f"{doc_id}: binary file (NUL bytes), not text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{doc_id}: not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})") from None
    # Spans index the text exactly as the user sees it in an editor: no BOM, \n line ends.
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def load_document(root: Path, rel: str | Path, limits: LoadLimits | None = None) -> Document:
    """Load one KB file given its path relative to the root; raises DocumentError with the reason."""
    limits = limits or LoadLimits()
    root = Path(root).resolve()
    rel_path = Path(rel)
    doc_id = rel_path.as_posix()
    if rel_path.is_absolute() or ".." in rel_path.parts:
        raise PathRefusedError(f"{doc_id}: path must be relative to the knowledge-base root without '..'")
    _check_inside(root, rel_path)
    path = root / rel_path
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise DocumentError(f"{doc_id}: unsupported file type {path.suffix or '(none)'}; "
                            f"supported: {', '.join(sorted(KINDS))}")
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise DocumentError(f"{doc_id}: {size} bytes exceeds the limit of {limits.max_file_bytes} bytes")
    raw = path.read_bytes()
    fm: dict = {}
    body_start = 0
    embedded_title = html_lang = None
    page_starts: list[int] | None = None
    if kind == "pdf":
        text, page_starts, embedded_title = pdf_to_text(raw, doc_id)
    elif kind == "docx":
        text, embedded_title = docx_to_text(raw, doc_id)
    else:
        text = decode(raw, doc_id)
    if kind == "html":
        fm = html_meta(text)            # <meta name="authority" content="note">: an HTML page's front matter
        text, embedded_title, html_lang = html_to_text(text)
    elif kind not in ("pdf", "docx"):
        fm, body_start = parse_front_matter(text, doc_id)
    tags = fm.get("tags") or []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    if not isinstance(tags, list) or not all(isinstance(t, (str, int)) for t in tags):
        raise DocumentError(f"{doc_id}: front matter 'tags' must be a list of strings")
    supersedes = _meta_str(fm, "supersedes", doc_id)
    if supersedes is not None:
        supersedes = normalize_doc_id(supersedes)
    authority = _meta_str(fm, "authority", doc_id)
    banner = find_banner(text, body_start)
    meta = DocumentMeta(
        doc_id=doc_id, sha256=hashlib.sha256(raw).hexdigest(), kind=kind,
        title=_meta_str(fm, "title", doc_id) or embedded_title,
        language=(_meta_str(fm, "language", doc_id) or html_lang or guess_language(text[body_start:])).lower(),
        tags=[str(t).strip() for t in tags if str(t).strip()],
        effective_date=_meta_str(fm, "effective_date", doc_id), supersedes=supersedes, body_start=body_start,
        authority=authority.lower() if authority else None, banner=banner[0] if banner else None,
        banner_ref=banner[1] if banner else None, page_starts=page_starts, subject=_meta_str(fm, "subject", doc_id),
        declared_superseded_by=_meta_str(fm, "superseded_by", doc_id))
    return Document(meta=meta, text=text)


def scan_kb(root: str | Path, limits: LoadLimits | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """List loadable candidate files (relative posix paths, sorted) and (path, reason) for refused ones.

    Hidden files and folders (".git", ".verirag") are ignored; symlinks are refused, never followed.
    """
    limits = limits or LoadLimits()
    root = Path(root)
    if not root.is_dir():
        raise DocumentError(f"knowledge base {str(root)!r} is not a directory")
    root = root.resolve()
    found: list[str] = []
    refused: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for d in list(dirnames):
            if d.startswith("."):
                dirnames.remove(d)
            elif (base / d).is_symlink():
                dirnames.remove(d)
                refused.append(((base / d).relative_to(root).as_posix(), "symlinks are refused in a knowledge base"))
        for name in filenames:
            if name.startswith("."):
                continue
            p = base / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                refused.append((rel, "symlinks are refused in a knowledge base"))
            elif p.suffix.lower() in KINDS:
                found.append(rel)
            elif p.suffix.lower() in UNSUPPORTED_DOCUMENTS:
                refused.append((rel, f"unsupported file type {p.suffix.lower()}; supported: {', '.join(sorted(KINDS))}"))
    found.sort()
    if len(found) > limits.max_files:
        raise DocumentError(f"knowledge base has {len(found)} files, over the limit of {limits.max_files}")
    return found, refused
