"""What a response echoes of the request, made safe to print: control characters (ESC starts terminal escape
sequences) and bidirectional overrides (which reorder what a reader sees) are written as visible \\uXXXX escapes."""
from __future__ import annotations

import re
from typing import Any

# C0 and C1 controls but tab, line feed and carriage return; the bidi marks, embeddings, overrides and isolates
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escape_echoes(result: dict[str, Any]) -> dict[str, Any]:
    """A result dict with the question and the follow-up queries (built from it) escaped."""
    out = dict(result)
    if isinstance(out.get("question"), str):
        out["question"] = escape_controls(out["question"])
    if isinstance(out.get("followups"), list):
        out["followups"] = [escape_controls(f) if isinstance(f, str) else f for f in out["followups"]]
    return out
