"""The service's log lines: one JSON object each (time, level, logger, message, and the request id of the request
being handled, where there is one), so that warnings, uvicorn's lines and the access log read alike."""
from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar

# set by api.security.RequestGuard for each request; worker threads inherit it (their context is a copy)
REQUEST_ID: ContextVar[str | None] = ContextVar("verirag_request_id", default=None)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {"ts": round(record.created, 3), "level": record.levelname.lower(),
                                   "logger": record.name, "message": record.getMessage()}
        rid = getattr(record, "request_id", None) or REQUEST_ID.get()
        if rid:
            line["request_id"] = rid
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure(level: str, json_lines: bool) -> None:
    """The root handler on stderr: JSON lines (or the plain `time level logger: message`), Python warnings
    routed through it. Replaces handlers an earlier call (or basicConfig) installed, so calling twice is safe."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)     # warnings.warn(...) becomes a log record (py.warnings), not a bare line
    for name in ("uvicorn", "uvicorn.error"):   # uvicorn's own lines go through the root handler too
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
