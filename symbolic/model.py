"""Typed objects a rule file parses into: vocabulary, patterns, facts, forward and backward rules."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Union

from .errors import Location

VALUE_TYPES = {"number", "quantity", "duration", "money", "percent", "date", "text"}
TYPE_ALIASES = {"percentage": "percent", "string": "text", "integer": "number", "amount": "money"}


@dataclass(frozen=True)
class Var:
    name: str
    location: Location | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"?{self.name}"


@dataclass(frozen=True)
class Wildcard:
    location: Location | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Const:
    value: Any            # entity id (str) or a symbolic.values value
    location: Location | None = field(default=None, compare=False)
    quoted: bool = field(default=False, compare=False)   # written as "..." (may be an alias)

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class BinOp:
    op: str               # + - * /
    left: "Term"
    right: "Term"
    location: Location | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Negate:
    operand: "Term"
    location: Location | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"-{self.operand}"


# Functions in expressions (value -> value), aggregates over matching facts, and text predicates
# (conditions); arities. The checker turns a condition named like a predicate into a Builtin.
FUNCTIONS = {"days_between": 2, "business_days_between": 2}
AGGREGATES = {"count": 1, "sum": 2, "min": 2, "max": 2}
# max and min of two values ("the greater of this policy's entitlement and the statutory one"): as aggregates,
# their last argument is a relation; as these, a value
VALUE_EXTREMES = {"max", "min"}
PREDICATES = {"starts_with": 2, "ends_with": 2, "contains": 2, "matches": 2}


@dataclass(frozen=True)
class Call:
    """days_between(?a, ?b); count(p(?x, _)); sum(?v, p(?x, ?v)). In an aggregate, the atom's variables
    that the rest of the rule binds join it; the others range over the matching facts."""
    name: str
    args: tuple
    location: Location | None = field(default=None, compare=False)
    holidays: frozenset = field(default=frozenset(), compare=False)   # business days: the declared holidays

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


Term = Union[Var, Wildcard, Const, BinOp, Negate, Call]


@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple
    location: Location | None = field(default=None, compare=False)
    source: Var | None = None     # `… from ?doc`: binds the document id of the matched fact

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(map(str, self.args))})" + (f" from {self.source}" if self.source else "")


@dataclass(frozen=True)
class Not:
    atom: Atom
    location: Location | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"not {self.atom}"


@dataclass(frozen=True)
class Comparison:
    op: str               # < <= > >= == !=
    left: Term
    right: Term
    location: Location | None = field(default=None, compare=False)
    rates: tuple = field(default=(), compare=False)   # the rule base's currency rates, for money

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Builtin:
    """A text predicate used as a condition: starts_with(?title, "VP"), matches(?code, "^[A-Z]{3}$")."""
    name: str
    args: tuple
    location: Location | None = field(default=None, compare=False)
    negated: bool = False   # written `not starts_with(…)`

    def __str__(self) -> str:
        return ("not " if self.negated else "") + f"{self.name}({', '.join(map(str, self.args))})"


Condition = Union[Atom, Not, Comparison, Builtin]


@dataclass(frozen=True)
class AssertAction:
    atom: Atom
    cf: float = 1.0


@dataclass(frozen=True)
class ViolationAction:
    message: str
    location: Location | None = None


@dataclass
class EntityType:
    name: str
    label: str | None
    aliases: list[str]
    location: Location


@dataclass
class Entity:
    id: str
    type: str
    label: str
    aliases: list[str]
    location: Location

    @property
    def names(self) -> list[str]:
        return [self.label, *self.aliases, self.id.replace("_", " ")]


@dataclass
class Param:
    name: str | None
    type: str             # an entity type or one of VALUE_TYPES
    unit: str | None
    location: Location

    def __str__(self) -> str:
        return (f"{self.name}: " if self.name else "") + self.type + (f"[{self.unit}]" if self.unit else "")


# What a relation's value is to a value the asker states (`limit upper`: a maximum, a deadline; `limit
# lower`: a minimum; `limit none`: not a limit, whatever its name says).
LIMIT_KINDS = ("upper", "lower", "none")


@dataclass
class RelationSig:
    name: str
    params: list[Param]
    label: str | None
    aliases: list[str]
    unique: bool          # declared `unique`: one value per subject even for an entity-typed last arg
    location: Location
    limit: str | None = None   # declared `limit upper|lower|none`; None: read from the relation's names
    ordered: bool = False      # declared `ordered`: of its goals, the first that proves a value for a subject decides

    @property
    def arity(self) -> int:
        return len(self.params)

    @property
    def functional(self) -> bool:
        """One value per subject (all args but the last), so a different value contradicts."""
        return self.unique or (self.arity >= 2 and self.params[-1].type in VALUE_TYPES)


@dataclass
class Pattern:
    id: str
    text: str             # plain: the source text between the quotes, escapes kept; re"...": \" unescaped
    regex: bool           # written re"..." (raw regular expression with {placeholders})
    atom: Atom
    cf: float
    location: Location
    text_location: Location
    message: str | None = None
    reads: str = "both"   # "answers", "documents" or "both": the texts the pattern is matched against


@dataclass
class RateDecl:
    """`rate USD CNY 7.0`: one unit of the first currency is worth ``rate`` of the second."""
    source: str
    target: str
    rate: float
    location: Location


@dataclass
class Link:
    """`link city_tier -> hotel_limit_per_night`: the value of the first relation (its last argument) is an
    argument of the second, so finding one leads retrieval to the other (a multi-hop question's hop)."""
    source: str
    target: str
    message: str | None
    location: Location            # the source relation's name
    target_location: Location     # the target relation's name


@dataclass
class FactDecl:
    atom: Atom
    cf: float
    location: Location


@dataclass
class ForwardRule:
    id: str
    message: str
    cf: float
    salience: int
    conditions: list[Condition]
    actions: list[AssertAction | ViolationAction]
    location: Location
    kind: str = "rule"
    variant: int = 0      # which alternative of an `or` (each is run as a rule of its own)

    @property
    def key(self) -> str:
        """Unique among a rule base's forward rules (an `or` makes several rules with one id)."""
        return self.id if self.variant == 0 else f"{self.id}|{self.variant + 1}"


@dataclass
class BackwardRule:
    id: str
    message: str
    cf: float
    head: Atom
    premises: list[Condition]
    location: Location
    kind: str = "goal"
    variant: int = 0      # which alternative of an `or`
    ordered: bool = False   # its relation is `ordered`: goals are tried in the order written (first match decides)


def term_vars(term: Any) -> set[str]:
    if isinstance(term, Var):
        return {term.name}
    if isinstance(term, BinOp):
        return term_vars(term.left) | term_vars(term.right)
    if isinstance(term, Negate):
        return term_vars(term.operand)
    if isinstance(term, Atom) and term.source is not None:
        return term_vars(replace(term, source=None)) | {term.source.name}
    if isinstance(term, (Atom, Call, Builtin)):
        return set().union(*(term_vars(a) for a in term.args)) if term.args else set()
    if isinstance(term, Not):
        return term_vars(term.atom)
    if isinstance(term, Comparison):
        return term_vars(term.left) | term_vars(term.right)
    return set()


# An aggregate's window: `sum(?y, between(?d, ?on - 30 days, ?on), purchase(?p, ?d, ?y))` adds up only the facts
# whose ?d lies between the two bounds (inclusive): "related purchases within 30 days are added together".
WINDOW = "between"


def aggregate_window(call: Call) -> Call | None:
    """The `between(?v, lo, hi)` an aggregate call's facts are bounded by, or None."""
    if len(call.args) >= 2 and isinstance(call.args[-2], Call) and call.args[-2].name == WINDOW:
        return call.args[-2]
    return None


def is_aggregate(call: Call) -> bool:
    """An aggregate over facts (``max(?v, p(?x, ?v))``), not ``max``/``min`` of two values (``max(?a, ?b)``)."""
    return call.name in AGGREGATES and bool(call.args) and isinstance(call.args[-1], Call)


def aggregates(term: Any) -> list[Call]:
    """The aggregate calls inside a term or comparison."""
    if isinstance(term, Call):
        return [term] if is_aggregate(term) else [c for a in term.args for c in aggregates(a)]
    if isinstance(term, BinOp):
        return aggregates(term.left) + aggregates(term.right)
    if isinstance(term, Negate):
        return aggregates(term.operand)
    if isinstance(term, Comparison):
        return aggregates(term.left) + aggregates(term.right)
    return []


def outer_vars(cond: Any, bound: set[str]) -> set[str]:
    """Variables a test needs bound before it runs: all of its own, but of an aggregate's atom only those
    ``bound`` (by the rule's fact conditions); the rest range over the facts."""
    local = set().union(*(term_vars(c) - bound for c in aggregates(cond))) if aggregates(cond) else set()
    return term_vars(cond) - local
