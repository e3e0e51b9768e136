"""Helpers shared by the content tests of the evaluation sets (tests/test_default_content.py for the
default domain, tests/test_holdout_content.py for the held-out domain): the eval-set contract, number
and value matching as eval/README.md defines it, front matter and JSON Lines reading."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

KINDS = {"answerable", "multi_hop", "numeric", "unanswerable", "false_premise", "superseded", "constraint"}
REQUIRED = {"id": str, "question": str, "language": str, "kind": str, "gold_answer": str,
            "gold_facts": list, "support": list, "forbidden": list}
FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
# A number as written in the documents: optional thousands separators, optional decimals.
NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def numbers(text: str) -> set[float]:
    """Every number in the text, thousands separators removed, as floats (so '2.0' == '2')."""
    return {float(m.replace(",", "")) for m in NUMBER.findall(text)}


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def mentions(text: str, value: str) -> bool:
    """Whether the text states the value, whole numbers only: 'EUR 75' is not in 'EUR 750', '5 %' not in '25 %'."""
    pattern = re.escape(norm(value))
    if value[:1].isdigit():
        pattern = r"(?<![\d.,])" + pattern
    if value[-1:].isdigit():
        pattern += r"(?![\d]|[.,]\d)"
    return re.search(pattern, norm(text)) is not None


def split_front_matter(text: str, where: str) -> tuple[dict, str]:
    """(YAML front matter, body after it) of a markdown document; fails the test when there is none."""
    m = FRONT.match(text)
    assert m, f"{where}: no YAML front matter"
    return yaml.safe_load(m.group(1)), text[m.end():]


def read_jsonl(path: Path) -> list[dict]:
    """One JSON object per line; a blank or unparsable line fails the test with its line number."""
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"line {n}: blank line"
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            pytest.fail(f"line {n}: not JSON: {exc}")
    return items


def check_superseded_items(items: list[dict], docs: dict, superseding: dict[str, str]) -> None:
    """Superseded items cite the current document of the one superseded pair, never the old one; each forbids
    values the old document states, and asks about something the two versions really disagree on."""
    (new, old), = superseding.items()
    old_text = docs[old][1]
    for it in (it for it in items if it["kind"] == "superseded"):
        assert new in it["support"] and old not in it["support"], it["id"]
        assert it["forbidden"], it["id"]
        for bad in it["forbidden"]:
            want = numbers(bad)
            if want:
                assert want <= numbers(old_text), (it["id"], bad)
            else:
                assert mentions(old_text, bad), (it["id"], bad)
        for fact in it["gold_facts"]:
            assert not mentions(old_text, fact["object"]), (it["id"], fact)
