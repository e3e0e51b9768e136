"""Stratified negation: forward rules ordered so that `not p(...)` is tested only after every rule that
can derive p has finished (order-independent negation), and cycles through `not` found."""
from __future__ import annotations

from . import model as m
from .check_builtins import aggregate_relations

# A stratum outranks any salience a rule file may give: salience orders rules only within a stratum.
STRATUM_GAP = 1_000_000


def _relations(rule: m.ForwardRule) -> tuple[set[str], set[str], set[str]]:
    pos = {c.relation for c in rule.conditions if isinstance(c, m.Atom)}
    # an aggregate, like `not`, must see every fact of its relation: it waits for their producers
    neg = {c.atom.relation for c in rule.conditions if isinstance(c, m.Not)} | \
        set().union(*(aggregate_relations(c) for c in rule.conditions))
    out = {a.atom.relation for a in rule.actions if isinstance(a, m.AssertAction)}
    return pos, neg, out


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), producers before consumers."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out[::-1]   # Tarjan emits consumers first


def strata(rules: list[m.ForwardRule]) -> tuple[dict[str, int], list[list[str]]]:
    """(stratum per rule id, the groups of rules that form a cycle through `not`). A rule's stratum is at
    least that of every rule deriving a relation it matches, and above that of every rule deriving a
    relation it negates. Rules on one cycle through `not` (e.g. a rule negating what it derives, the
    "fire once" idiom) cannot be so ordered: they share a stratum and salience orders them."""
    rels = {r.key: _relations(r) for r in rules}
    producers: dict[str, set[str]] = {}
    for rid, (_pos, _neg, out) in rels.items():
        for rel in out:
            producers.setdefault(rel, set()).add(rid)
    feeds: dict[str, set[str]] = {rid: set() for rid in rels}  # producer -> consumers (matching or negating)
    negated_by: dict[str, set[str]] = {rid: set() for rid in rels}   # producer -> rules negating its output
    for rid, (pos, neg, _out) in rels.items():
        for rel in pos | neg:
            for p in producers.get(rel, ()):
                feeds[p].add(rid)
        for rel in neg:
            for p in producers.get(rel, ()):
                negated_by[p].add(rid)
    level: dict[str, int] = {}
    cycles: list[list[str]] = []
    comp_of: dict[str, int] = {}
    comps = components(feeds)
    for k, comp in enumerate(comps):
        for rid in comp:
            comp_of[rid] = k
    for k, comp in enumerate(comps):     # producers' components come first
        members = set(comp)
        if any(negated_by[p] & members for p in comp):
            cycles.append(comp)
        lv = 0
        for rid in comp:
            pos, neg, _out = rels[rid]
            for rel in pos:
                lv = max([lv] + [level[p] for p in producers.get(rel, ()) if p not in members])
            for rel in neg:
                lv = max([lv] + [level[p] + 1 for p in producers.get(rel, ()) if p not in members])
        for rid in comp:
            level[rid] = lv
    return level, cycles


def effective_salience(rule: m.ForwardRule, stratum: int) -> int:
    """Lower strata first; the rule's own salience (clamped to the gap) within its stratum."""
    own = max(-STRATUM_GAP // 2 + 1, min(STRATUM_GAP // 2 - 1, rule.salience))
    return own - stratum * STRATUM_GAP
