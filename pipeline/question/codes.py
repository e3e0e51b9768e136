"""Names read from the words where no rule file declares them: product and model codes ("LX-500", "XR-40",
"HG7"), so a value stated about the LC-220 is not taken for the XR-40's, and capitalised names of one kind
("Standard Support", "Premium Support"; English only, as Chinese has no capitals), so an answer about one is
not taken for the other's."""
from __future__ import annotations

import re

from pipeline.lang import words
from pipeline.question.focus import QuestionFocus

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


def names_another_code(question: str, answer: str) -> str | None:
    """Why ``answer`` is about another model than asked: it names a code of the family the question's codes are
    of (same letters: "TBL-101" to "TBL-50") and none of those (the entity's own name included); else None."""
    asked, said = codes(question), codes(answer)
    families = {c.split("-")[0] for c in asked}
    other = sorted(c for c in said if c.split("-")[0] in families)
    if asked and other and not said & asked:
        return f"it is about {other[0]}, but the question asks about {' or '.join(sorted(asked))}"
    return None


# Two or more capitalised words, the last the kind ("Standard Support", "Northwind Fleet Manager"); not a
# sentence's first word before a name ("The Aldera"), as those are function words (lang/<code>/question.toml
# function_words).
_NAME = re.compile(r"(?<![\w-])((?:[A-Z][a-z]+\s+)+)([A-Z][a-z]+)(?![\w-])")
_FUNCTION = frozenset(words("question.function_words"))


def capitalised_names(text: str) -> set[tuple[str, str]]:
    """(modifier, kind) of each capitalised name: ("Standard", "Support") of "Standard Support"."""
    out = set()
    for m in _NAME.finditer(text):
        words = [w for w in m.group(1).split() if w not in _FUNCTION]
        if words:
            out.add((" ".join(words), m.group(2)))
    return out


def names_a_sibling(asking_clause: str, answer: str) -> str | None:
    """Why ``answer`` is about another of the kind its question's asking clause names: it names "Premium
    Support" and never "Standard Support", asked ("…so what does Standard Support cost after the warranty?")."""
    asked = capitalised_names(asking_clause)
    said = capitalised_names(answer)
    for modifier, kind in sorted(asked):
        if sum(k == kind for _m, k in asked) > 1:     # "Premium Support, unlike Standard Support": both asked
            continue
        # another modifier sharing no word: "Premium" to "Standard"; not "Priya" to "Dr Priya"
        others = sorted(m for m, k in said if k == kind and not set(m.split()) & set(modifier.split()))
        if others and not any(k == kind and set(m.split()) & set(modifier.split()) for m, k in said):
            return f"it is about {others[0]} {kind}, but the question asks about {modifier} {kind}"
    return None
