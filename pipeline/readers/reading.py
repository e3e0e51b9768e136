"""One draft's Reading: the answer with what it is read against (its sources, the question's focus, the rule base),
made once per draft and passed to every reader, which adds the claims it reads and takes the value mentions it
places (the way a spaCy Doc is annotated once and passed through the pipeline's components)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable, Sequence, cast

from pipeline.question.focus import QuestionFocus
from pipeline.readers.premises import stated_premises
from pipeline.seams import Generator, PassageLike
from pipeline.text.values import ValueMention
from symbolic import Claim, RuleBase


@dataclass
class Reading:
    """A draft being read. ``mentions``: the values it states that no rule-file pattern read; ``left``: those
    no reader has placed yet (a subsequence of ``mentions``, in order); ``claims``: what the readers read."""

    answer: str
    passages: Sequence[PassageLike]
    context: Sequence[dict]          # the chat the draft answers (the model reader puts it to the model again)
    focus: QuestionFocus
    rulebase: RuleBase | None
    generator: Generator | None = None
    claims: list[Claim] = field(default_factory=list)
    mentions: list[ValueMention] = field(default_factory=list)
    left: list[ValueMention] = field(default_factory=list)
    # a band's value stays open to the totals reader ("8 %" for "12 robots" may be the total asked) though the
    # band reader placed it
    band_values: set[int] = field(default_factory=set)
    # the relation the focus reader placed each mention in (by id): another reader may read a second one
    focus_relations: dict[int, str] = field(default_factory=dict)

    @property
    def rules(self) -> RuleBase:
        """``rulebase``, which a registered reader always has: registry.read runs none without one."""
        return cast(RuleBase, self.rulebase)

    @cached_property
    def premises(self) -> list[Claim]:
        """The premises the question states (read once, where the draft states values no pattern read)."""
        return stated_premises(self.focus.question, self.focus, self.rules) if self.mentions else []

    def place(self, placed: Sequence[tuple[Claim, ValueMention]]) -> None:
        """Add the claims of ``placed`` (claim, mention) pairs; their mentions are no longer left."""
        self.claims += [c for c, _m in placed]
        self.take(m for _c, m in placed)

    def take(self, mentions: Iterable[ValueMention]) -> None:
        """The ``mentions`` are placed: no longer left."""
        taken = {id(m) for m in mentions}
        self.left = [m for m in self.left if id(m) not in taken]


# A reader reads ``reading.answer`` into claims of the rule vocabulary, adding them to the reading.
Reader = Callable[[Reading], None]
