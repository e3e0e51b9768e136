"""A loaded rule base: files + includes parsed, checked, and indexed; extraction with its patterns."""
from __future__ import annotations

import gc
import re
from dataclasses import replace
from pathlib import Path

from . import model as m
from .check import Checker, find_cycles
from .errors import Location, RuleError, RuleErrors
from .facts import Fact, Provenance
from .files import (MAX_STATEMENTS, collect as _collect, content_version, release_gradually,  # noqa: F401
                    rule_files)  # (release_gradually is re-exported)
from .lint import regex_habits
from .strata import strata
from .tables import TypedView, typed_view
from .patterns import CompiledPattern, PatternError, compile_pattern, name_regex, normalise_name

# In a pattern's conclusion, ?document stands for the entity the document is about (its front matter `subject:`,
# else the one entity of the argument's type its title names): a datasheet's rows without a subject column.
DOCUMENT = "document"
from .provenance import DOCUMENT_RELATIONS, with_document_relations
from .rates import check_rates, convert
from .values import Money, Quantity, canonical_currency, parse_value


class RuleBase:
    """Vocabulary, patterns, facts, forward rules (``forward_rules``) and goals (``backward_rules``)."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.texts: dict[str, str] = {}
        self.types: dict[str, m.EntityType] = {}
        self.entities: dict[str, m.Entity] = {}
        self._named_cache: dict[tuple[str, str], str | None] = {}
        self.relations: dict[str, m.RelationSig] = {}
        self.patterns: list[CompiledPattern] = []
        self.facts: list[Fact] = []
        self.forward_rules: list[m.ForwardRule] = []
        self.backward_rules: list[m.BackwardRule] = []
        self.links: list[m.Link] = []         # `link a -> b`: a's value is an argument of b
        self.warnings: list[RuleError] = []
        self.rates: dict[tuple[str, str], float] = {}
        self.holidays: frozenset = frozenset()   # `holiday` dates: no business days   # (from, to) -> how many `to` one `from` is worth
        self._alias: dict[tuple[str, str], str] = {}
        # what the rule files said, as a hash: two loads of the same files share it, and caches of what a rule
        # base reads (a knowledge base's facts) are keyed by it, never by the object's id (ids are reused)
        self.version: str = ""

    @property
    def rules(self) -> list[m.ForwardRule | m.BackwardRule]:
        return [*self.forward_rules, *self.backward_rules]

    def rule(self, rule_id: str) -> m.ForwardRule | m.BackwardRule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def entity_id(self, text: str, entity_type: str | None = None) -> str | None:
        """Canonical entity id for an alias in any language (None if unknown)."""
        key = normalise_name(text)
        for k in (key, key[:-1] if key.endswith("s") else None, key[:-2] if key.endswith("es") else None):
            if not k:
                continue
            if entity_type:
                hit = self._alias.get((entity_type, k))
            else:
                hit = next((eid for (t, a), eid in self._alias.items() if a == k), None)
            if hit:
                return hit
        return None

    def extract(self, text: str, *, source: Provenance = Provenance("document"),
                table_header: str | None = None, subject: str | None = None) -> list[tuple[Fact, int, int]]:
        """Facts the extraction patterns find in ``text``, with their character spans in ``text``.
        Fact provenance spans are offset by ``source.start`` (the text's position in its document). A table
        cell holding a bare number reads with its column header's unit ("Limit (USD) | 1,000" as USD 1,000;
        ``table_header``: the header a chunk of rows cut from it carries), or its row label's ("Max draught (m) |
        12.5"), for a pattern that reads nothing from the cell as bare. ``subject``: what the document is
        about (its front matter ``subject:``, else its title), the entity a pattern's ``?document`` stands for."""
        base = source.start or 0
        seen: set[tuple] = set()
        out: list[tuple[Fact, int, int]] = []
        # a row label's unit ("Bollard pull (t) | 70") types the cells its header leaves bare, for the patterns that
        # read them so; a pattern reading the bare number ("{n:number}") keeps what it read without it
        views = [typed_view(text, table_header, row_labels=False)]
        with_rows = typed_view(text, table_header)
        if with_rows.text != views[0].text:
            views.append(with_rows)
        read: dict[str, list[tuple[int, int]]] = {}
        side = "answers" if source.source == "answer" else "documents"
        patterns = [cp for cp in self.patterns if cp.pattern.reads in ("both", side)]
        for k, view in enumerate(views):
            for cp in patterns:
                for fact, s, e in self._read_with(cp, view, subject, source, base):
                    if k and any(s < e2 and s2 < e for s2, e2 in read.get(cp.pattern.id, ())):
                        continue
                    if k == 0:
                        read.setdefault(cp.pattern.id, []).append((s, e))
                    key = (fact.relation, fact.args, s, e)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append((fact, s, e))
        out.sort(key=lambda t: (t[1], t[2]))
        return out

    def _read_with(self, cp: CompiledPattern, view: TypedView, subject: str | None, source: Provenance,
                   base: int) -> list[tuple[Fact, int, int]]:
        """The facts one pattern reads from one typed view of a text, with their spans in the original."""
        sig = self.relations[cp.pattern.atom.relation]
        text = view.text
        out: list[tuple[Fact, int, int]] = []
        for match in cp.regex.finditer(text):
            match = self._nearest(cp, text, match)
            # a placeholder inside an optional part or a choice may not take part in the match
            bound = {cap.name: self._read(cap.type, match.group(cap.group)) for cap in cp.captures}
            if DOCUMENT in cp.subject_types:
                bound[DOCUMENT] = self.named_in(subject, cp.subject_types[DOCUMENT])
            if any(bound[a.name] is None for a in cp.pattern.atom.args if isinstance(a, m.Var)):
                continue  # an argument is missing or unreadable: no fact (unused placeholders are context)
            args = []
            for a, p in zip(cp.pattern.atom.args, sig.params):
                v = bound[a.name] if isinstance(a, m.Var) else a.value
                if isinstance(v, Quantity) and p.unit:
                    try:
                        v = v.to(p.unit)
                    except ValueError:
                        pass
                elif isinstance(v, Money) and p.unit and self.rates:
                    # a relation's declared currency: a declared rate converts an amount in another
                    v = convert(v, canonical_currency(p.unit), self._rate_table()) or v
                args.append(v)
            s, e = view.original(match.start()), view.original(match.end())
            prov = replace(source, start=base + s, end=base + e,
                           rule_id=cp.pattern.id if source.rule_id is None else source.rule_id)
            out.append((Fact(sig.name, tuple(args), cp.pattern.cf, prov), s, e))
        return out

    def _nearest(self, cp: CompiledPattern, text: str, match: re.Match) -> re.Match:
        """The match read from the nearest naming of its leading entity: in "Sun Peng reports to Zhao Lin, who
        is at the Chengdu depot" a gap from a person to a location spans another person, and the location is
        said of the nearer one. Only the leading placeholder moves; the others keep their spans."""
        first = cp.captures[0] if cp.captures else None
        if first is None or first.type not in self.types or match.start(first.group) != match.start():
            return match
        rest = [(c.group, match.span(c.group)) for c in cp.captures[1:] if match.start(c.group) >= 0]
        limit = min((span[0] for _g, span in rest), default=match.end())
        best = match
        for pos in range(match.end(first.group), limit):
            if not text[pos].isalnum() or (pos and text[pos - 1].isalnum() and text[pos].isascii()):
                continue
            later = cp.regex.match(text, pos)
            if later is not None and later.start(first.group) == pos and \
                    all(later.span(g) == span for g, span in rest):
                best = later
        return best

    def _rate_table(self) -> tuple:
        return tuple((s, d, r) for (s, d), r in self.rates.items())

    def named_in(self, text: str | None, etype: str) -> str | None:
        """The one entity of type ``etype`` that ``text`` names (by id or by any of its names), else None."""
        if not text:
            return None
        key = (text, etype)
        if key not in self._named_cache:
            exact = self.entity_id(text, etype)
            found = {exact} if exact else {e.id for e in self.entities.values() if e.type == etype and any(
                re.search(name_regex(n), text, re.IGNORECASE) for n in e.names if n)}
            self._named_cache[key] = found.pop() if len(found) == 1 else None
        return self._named_cache[key]

    def _read(self, ptype: str, raw: str | None):
        """A placeholder's matched text as an entity id or value; None if it did not take part in the
        match or cannot be read (unknown entity, unparseable value, blank text)."""
        if raw is None:
            return None
        if ptype in self.types:
            return self.entity_id(raw, ptype)
        if ptype == "text":
            return raw.strip() or None
        try:
            return parse_value(raw)
        except ValueError:
            return None


def load_rulebase(target: str | Path | list, *, max_statements: int | None = None) -> RuleBase:
    """Load, check and index rule files; raises RuleErrors (every error found) on failure.
    Warnings (unreachable goals, rule cycles) are kept in ``rb.warnings``. ``max_statements``: the size
    limit (default MAX_STATEMENTS; 0: none)."""
    # Loading builds many objects and little garbage: the cyclic collector's full passes over a growing
    # heap cost 20,000 rules 2.2 s in pauses of up to 0.45 s (which stall every thread), so it waits.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(target, max_statements)
    finally:
        if was_enabled:
            gc.enable()


def _load(target: str | Path | list, max_statements: int | None) -> RuleBase:
    files = rule_files(target)
    if not files:
        raise RuleErrors([RuleError(f"no .rules files in {target}")])
    parsed, errors = _collect(files, MAX_STATEMENTS if max_statements is None else max_statements)
    if errors:  # syntax errors first: semantic checks on half-parsed files would only add noise
        raise RuleErrors(errors)
    rb = RuleBase()
    rb.files = [pf.path for pf in parsed]
    rb.texts = {pf.path: pf.text for pf in parsed}
    rb.version = content_version(rb.texts)
    ck = Checker(rb.texts, rb.types, rb.entities, rb.relations)
    first_def: dict[tuple[str, str], Location] = {}

    def define(kind: str, name: str, loc: Location) -> bool:
        prev = first_def.get((kind, name))
        if prev:
            ck.error(f"duplicate {kind} '{name}' (first defined at {prev})", loc)
            return False
        first_def[(kind, name)] = loc
        return True

    for pf in parsed:
        for t in pf.types:
            if define("type", t.name, t.location):
                rb.types[t.name] = t
        for e in pf.entities:
            rb.types.setdefault(e.type, m.EntityType(e.type, None, [], e.location))
            if define("entity", e.id, e.location):
                rb.entities[e.id] = e
    for type_name in rb.types:
        if type_name in m.VALUE_TYPES:
            ck.error(f"'{type_name}' is a built-in value type and cannot be an entity type",
                     rb.types[type_name].location)
    for pf in parsed:
        for r in pf.relations:
            if define("relation", r.name, r.location):
                rb.relations[r.name] = r
                ck.check_signature(r)
    ck.relations = with_document_relations(rb.relations)
    rb.rates = check_rates(ck, parsed)
    rb.holidays = ck.holidays = frozenset(day for pf in parsed for day, _loc in pf.holidays)
    ck.alias_index.clear()
    for e in rb.entities.values():
        for n in e.names:
            key = normalise_name(n)
            other = rb._alias.get((e.type, key))
            if other and other != e.id:
                ck.error(f"alias '{n}' of {e.id} already names {other}", e.location)
            rb._alias.setdefault((e.type, key), e.id)
            ck.alias_index.setdefault((e.type, n.strip().lower()), e.id)
    aliases_by_type: dict[str, list[str]] = {t: [] for t in rb.types}
    for e in rb.entities.values():
        aliases_by_type[e.type].extend(e.names)
    for pf in parsed:
        for p in pf.patterns:
            define("rule id", p.id, p.location)
            rb_pattern = _check_pattern(p, ck, rb, aliases_by_type)
            if rb_pattern:
                rb.patterns.append(rb_pattern)
        for f in pf.facts:
            atom = ck.check_atom(f.atom, {}, ground=True)
            if all(isinstance(a, m.Const) for a in atom.args):
                rb.facts.append(Fact(atom.relation, tuple(a.value for a in atom.args), max(-1.0, min(1.0, f.cf)),
                                     Provenance("rulebase", doc_id=f"{f.location.path}:{f.location.line}")))
        for rule in pf.rules:
            if rule.variant == 0:
                define("rule id", rule.id, rule.location)
            rb.forward_rules.append(ck.check_forward(rule))
        for g in pf.goals:
            if g.variant == 0:
                define("rule id", g.id, g.location)
            rb.backward_rules.append(ck.check_backward(g))
        for link in pf.links:
            if ck.check_link(link) and all((k.source, k.target) != (link.source, link.target) for k in rb.links):
                rb.links.append(link)
    _reachability(rb, ck)
    _closed_world(rb, ck)
    by_key = {r.key: r for r in rb.forward_rules}
    for keys in find_cycles(rb.forward_rules):
        cycle = list(dict.fromkeys(by_key[k].id for k in keys))   # the alternatives of an `or` are one rule
        r0 = by_key[keys[0]]
        ck.warn(f"rules {' -> '.join(cycle)} form a cycle (each asserts what another matches); forward "
                f"chaining stops at its firing limit if they keep asserting new facts", r0.location)
    for keys in strata(rb.forward_rules)[1]:
        group = list(dict.fromkeys(by_key[k].id for k in keys))
        r0 = min((by_key[k] for k in keys), key=lambda r: (r.location.path, r.location.line))
        ck.warn(f"rules {', '.join(group)} form a cycle through `not` (one negates what one of them derives): "
                f"their negations cannot wait for all derivations, so salience orders them", r0.location)
    if ck.errors:
        ck.errors.sort(key=lambda e: (rb.files.index(e.path) if e.path in rb.files else 0, e.line or 0, e.column or 0))
        raise RuleErrors(ck.errors)
    rb.warnings = ck.warnings
    for goal in rb.backward_rules:       # an `ordered` relation's goals decide in the order written
        sig = rb.relations.get(goal.head.relation)
        goal.ordered = bool(sig is not None and sig.ordered)
    release_gradually(*(lst for pf in parsed for lst in vars(pf).values() if isinstance(lst, list)))
    return rb


def _check_pattern(p: m.Pattern, ck: Checker, rb: RuleBase, aliases_by_type) -> CompiledPattern | None:
    if not p.regex:
        for offset, msg in regex_habits(p.text):
            loc = p.text_location
            ck.warn(f"pattern {p.id}: {msg}", Location(loc.path, loc.line, loc.column + 1 + offset))
    try:
        cp = compile_pattern(p, aliases_by_type, set(m.VALUE_TYPES))
    except PatternError as exc:
        loc = p.text_location
        ck.error(str(exc), Location(loc.path, loc.line, loc.column + (3 if p.regex else 1) + exc.offset))
        return None
    names = {c.name: c for c in cp.captures}
    args = []
    for a in p.atom.args:  # a bare name that is a placeholder becomes a variable
        if isinstance(a, m.Const) and isinstance(a.value, str) and not a.quoted and a.value in names:
            args.append(m.Var(a.value, a.location))
        else:
            args.append(a)
    atom = replace(p.atom, args=tuple(args))
    var_types = {c.name: c.type for c in cp.captures}
    sig = rb.relations.get(atom.relation)
    for a, param in zip(atom.args, sig.params if sig else ()):
        if isinstance(a, m.Var) and a.name == DOCUMENT and a.name not in var_types:
            if param.type not in rb.types:
                ck.error(f"pattern {p.id}: ?{DOCUMENT} stands for the entity the document is about, but "
                         f"{atom.relation}'s argument here is a {param.type}, not an entity type", a.location)
                continue
            var_types[DOCUMENT] = cp.subject_types[DOCUMENT] = param.type
    atom = ck.check_atom(atom, var_types)
    for a in atom.args:
        if isinstance(a, m.Wildcard):
            ck.error(f"pattern {p.id} cannot produce a wildcard _", a.location)
    cp.pattern = replace(p, atom=atom)
    return cp


def _reachability(rb: RuleBase, ck: Checker) -> None:
    """Warn about goals that can never be proved: a premise relation nothing produces."""
    produced = {cp.pattern.atom.relation for cp in rb.patterns} | {f.relation for f in rb.facts}
    produced |= set(DOCUMENT_RELATIONS)      # every document's status, effective date and authority
    produced |= {a.atom.relation for r in rb.forward_rules for a in r.actions if isinstance(a, m.AssertAction)}
    changed = True
    while changed:
        changed = False
        for g in rb.backward_rules:
            need = {c.relation for c in g.premises if isinstance(c, m.Atom)}
            if g.head.relation not in produced and need <= produced:
                produced.add(g.head.relation)
                changed = True
    for g in rb.backward_rules:
        missing = sorted({c.relation for c in g.premises if isinstance(c, m.Atom)} - produced)
        if missing and g.head.relation in rb.relations:
            ck.warn(f"goal {g.id} is unreachable: nothing produces {', '.join(missing)} (no pattern, fact, "
                    f"rule or reachable goal)", g.location)


def _closed_world(rb: RuleBase, ck: Checker) -> None:
    """Warn about `not` over a relation the patterns read from documents: a negation as failure is a closed-world
    assumption, and over pattern-read facts a row or sentence the patterns miss makes it hold ("a region not in
    the rate table gets the standard rate" proves it for a region whose cell was not read)."""
    read = {cp.pattern.atom.relation for cp in rb.patterns}
    rules: list[tuple[str, str, list[m.Condition], Location]] = \
        [("goal", g.id, g.premises, g.location) for g in rb.backward_rules if g.variant == 0] + \
        [("rule", r.id, r.conditions, r.location) for r in rb.forward_rules]
    for kind, rid, conditions, location in rules:
        for c in conditions:
            if isinstance(c, m.Not) and c.atom.relation in read:
                ck.warn(f"{kind} {rid}: `not {c.atom.relation}(…)` is a closed-world assumption over facts the "
                        f"patterns read: a row or sentence they miss makes it hold (see `verirag rules facts "
                        f"--relation {c.atom.relation}`); answers resting on it are checked against the text",
                        c.location or location)
