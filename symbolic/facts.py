"""Facts with certainty factors and provenance, and the claims an answer makes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .values import Date, Money, Percentage, Quantity, format_value


@dataclass(frozen=True)
class Provenance:
    source: str                      # "document" | "answer" | "derived" | "rulebase"
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    superseded: bool = False
    rule_id: str | None = None
    effective_date: str | None = None   # the document's front matter `effective_date` (ISO), if any
    authority: str | None = None        # the document's front matter `authority` (policy, note, …)
    # how much the source counts, as whoever builds the evidence ranks it: 2 a document that counts, 1 one
    # the knowledge base's register does not list, 0 a note or draft. Disagreeing evidence about one subject
    # is decided by standing before certainty factors combine (provenance.precedence)
    standing: int = 2

    def describe(self) -> str:
        where = self.doc_id or self.source
        if self.start is not None:
            where += f"[{self.start}:{self.end}]"
        if self.rule_id:
            where += f" via {self.rule_id}"
        return where + (" (superseded)" if self.superseded else "")

    def to_dict(self) -> dict:
        return {"source": self.source, "doc_id": self.doc_id, "start": self.start, "end": self.end,
                "superseded": self.superseded, "rule_id": self.rule_id, "effective_date": self.effective_date,
                "authority": self.authority, **({"standing": self.standing} if self.standing != 2 else {})}


@dataclass(frozen=True)
class Fact:
    relation: str
    args: tuple
    cf: float = 1.0
    provenance: Provenance = Provenance("rulebase")

    def __post_init__(self) -> None:
        if not -1.0 <= self.cf <= 1.0:
            raise ValueError(f"certainty factor {self.cf} of {self.relation} is outside [-1, 1]")
        if not isinstance(self.args, tuple):
            object.__setattr__(self, "args", tuple(self.args))

    @property
    def key(self) -> tuple:
        """Identity of the statement, ignoring certainty and provenance."""
        return (self.relation, self.args)

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(format_value(a) for a in self.args)})"

    def to_dict(self) -> dict:
        return {"relation": self.relation, "args": [value_to_json(a) for a in self.args], "cf": self.cf,
                "text": str(self), "provenance": self.provenance.to_dict()}


@dataclass
class Claim:
    fact: Fact
    text: str
    start: int
    end: int
    cited: list[str] = field(default_factory=list)
    # what read it: pattern | phrase | focus | vocabulary | band | chain | coordination | correction | lm | proof
    extractor: str = "pattern"


def value_to_json(v: Any) -> Any:
    if isinstance(v, Quantity):
        return {"value": v.value, "unit": v.unit} if v.unit else v.value
    if isinstance(v, Money):
        return {"amount": v.amount, "currency": v.currency}
    if isinstance(v, Percentage):
        return {"percent": v.value}
    if isinstance(v, Date):
        return {"date": str(v)}
    return v
