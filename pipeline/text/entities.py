"""Where a text names the rule base's entities: one regex over every entity name, longest first, cached per rule
base."""
from __future__ import annotations

import re
from dataclasses import dataclass

from symbolic import RuleBase
from symbolic.patterns import name_regex


@dataclass(frozen=True)
class EntityMention:
    entity_id: str
    type: str
    text: str
    start: int
    end: int
    described_by: str | None = None   # the relation the question describes it by (pipeline.evidence.described)
    via: str | None = None   # the entity it is the relation's object of ("the person Wang Yu reports to")


class EntityIndex:
    """One regex over every entity name of a rule base, longest names first."""

    def __init__(self, rulebase: RuleBase):
        names: dict[str, list[tuple[str, str]]] = {}
        for e in rulebase.entities.values():
            for n in e.names:
                if n and n.strip():
                    names.setdefault(n.strip().lower(), []).append((e.id, e.type))
        self.by_name = names
        alts = sorted(names, key=len, reverse=True)
        self.regex = re.compile("|".join(f"({name_regex(n)})" for n in alts), re.IGNORECASE) if alts else None
        self.group_names = alts
        # The readers of one answer look up the same sentences many times; one regex pass costs ~ms on a
        # rule base of a hundred names.
        self._memo: dict[str, tuple[EntityMention, ...]] = {}

    def find(self, text: str) -> list[EntityMention]:
        hit = self._memo.get(text)
        if hit is None:
            if len(self._memo) > 2048:
                self._memo.clear()
            hit = self._memo[text] = tuple(self._scan(text))
        return list(hit)

    def _scan(self, text: str) -> list[EntityMention]:
        if self.regex is None:
            return []
        out = []
        for m in self.regex.finditer(text):
            assert m.lastindex is not None  # one of the alternatives' groups matched
            name = self.group_names[m.lastindex - 1]
            for eid, etype in dict.fromkeys(self.by_name[name]):
                out.append(EntityMention(eid, etype, m.group(0), m.start(), m.end()))
        return out


_INDEX_CACHE: dict[int, tuple[RuleBase, EntityIndex]] = {}


def entity_index(rulebase: RuleBase) -> EntityIndex:
    hit = _INDEX_CACHE.get(id(rulebase))
    if hit is None or hit[0] is not rulebase:
        if len(_INDEX_CACHE) > 8:
            _INDEX_CACHE.clear()
        hit = (rulebase, EntityIndex(rulebase))
        _INDEX_CACHE[id(rulebase)] = hit
    return hit[1]


def find_entities(text: str, rulebase: RuleBase) -> list[EntityMention]:
    return entity_index(rulebase).find(text)
