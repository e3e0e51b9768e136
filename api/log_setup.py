"""Logging for a serving process (`verirag serve` and each Ray replica alike): the level, and the access log as
whole lines on stderr."""
from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from api.settings import Settings


def configure_logging(settings: Settings) -> None:
    """Log level for everything, every line JSON (api/logs.py; plain with --access-log plain), and the access
    log as whole lines on stderr."""
    from api.logs import configure

    configure(settings.log_level, json_lines=settings.access_log != "plain")
    access = logging.getLogger("verirag.access")  # api.access writes whole lines (JSON or plain): no prefix
    if not access.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s" if settings.access_log == "json"
                                               else "%(asctime)s access: %(message)s"))
        access.addHandler(handler)
    access.setLevel(logging.INFO)  # on unless --access-log off, whatever the log level (basicConfig may be a no-op)
    access.propagate = False
