"""YAML read with the line of every mapping and list item, so hand-written files get ``file:line`` errors."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from .errors import Location, RuleError, RuleErrors, source_line


@dataclass
class Item:
    """One hand-written fact and where it was written."""
    data: Any
    line: int


class Lined(dict):
    """A YAML mapping that remembers the line it starts on (1-based)."""
    line: int = 1


def _build(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = Lined()
        out.line = node.start_mark.line + 1
        for k, v in node.value:
            out[_build(k)] = _build(v)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(v) for v in node.value]
    # scalars: YAML's own typing (numbers, booleans), keeping "1,200" or "EUR 52" as text
    return yaml.safe_load(yaml.serialize(node)) if node.tag != "tag:yaml.org,2002:str" else node.value


def load_yaml(text: str, path: str) -> Any:
    """The document with line-aware mappings; RuleErrors at ``path:line:col`` for a YAML syntax error."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = getattr(exc, "problem", None) or str(exc)
        raise RuleErrors([RuleError(f"not valid YAML: {problem}", Location(path, line, col),
                                    source_line(text, line))]) from None
    return None if node is None else _build(node)


def yaml_list_items(text: str, path: str) -> list[Item]:
    """The items of a YAML list (the facts of a facts file) with their lines."""
    node = yaml.compose(text, Loader=yaml.SafeLoader) if text.strip() else None
    if not isinstance(node, yaml.SequenceNode):
        raise RuleErrors([RuleError("a facts file is a list of facts", Location(path, 1, 1))])
    return [Item(_build(v), v.start_mark.line + 1) for v in node.value]
