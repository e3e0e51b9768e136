"""Product and model codes ("LX-500", "XR-40", "UC-95", "HG7"): names a text uses even where no rule file
declares them, so a value stated about the LC-220 is not taken for the XR-40's with no domain rules loaded."""
from __future__ import annotations

import re

from pipeline.question import QuestionFocus

# Capitals, an optional hyphen, digits, an optional capital: "AX-200", "HG7", "RT-18"; not "kW", "3.6", "ISO 9001".
_CODE = re.compile(r"(?<![A-Za-z0-9-])([A-Z]{1,5})-?(\d{1,5}[A-Z]?)(?![A-Za-z0-9]|-\d)")


def codes(text: str) -> set[str]:
    """The codes ``text`` names, spelt one way ("XR-40" and "XR40" alike)."""
    return {f"{m.group(1)}-{m.group(2)}" for m in _CODE.finditer(text)}


def asked_codes(focus: QuestionFocus) -> set[str]:
    """The codes the question names that no entity of the rule files covers."""
    q = focus.question
    for e in focus.entities:
        q = q[:e.start] + " " * (e.end - e.start) + q[e.end:]
    return codes(q)


def names_other_codes(asked: set[str], text: str) -> str | None:
    """A code ``text`` names where it names none of ``asked`` (and ``asked`` is not empty), else None."""
    named = codes(text)
    return sorted(named)[0] if asked and named and not named & asked else None
