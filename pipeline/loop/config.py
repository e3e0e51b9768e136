"""What the answer loop needs and how it is set up: the model, retriever and rule-base holder it accepts, its
configuration, and the prepared first attempt (pipeline.loop.answerer runs the loop)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pipeline.evidence.gather import QuestionContext
from pipeline.generate import prompts
from pipeline.generate.profiles import PromptProfile
from pipeline.seams import Generator, PassageLike, RetrieverLike  # noqa: F401 (the loop's contract: pipeline.seams)

if TYPE_CHECKING:
    from symbolic import RuleBase

DEFAULT_CONTEXT_LEN = 2048


@runtime_checkable
class RuleBaseHolderLike(Protocol):
    """symbolic.RuleBaseHolder (hot reload) or anything else holding the rule base in effect (None: no rules)."""
    @property
    def current(self) -> RuleBase | None: ...


@dataclass
class AnswererConfig:
    context_len: int | None = None    # None -> the generator's max_model_len (else 2048)
    # An answer with no checkable claim (no rule-base relation, no value) is never "verified": the
    # verifier would be vouching for text it could not read.
    require_claim: bool = True
    max_feedback_items: int = 4
    # Prompt style and source budget; None: the generator's model's profile (pipeline.generate.profiles).
    profile: PromptProfile | None = None
    repetition_penalty: float = 1.0
    stop: tuple[str, ...] = ("\n\n",)  # answers are one paragraph; a blank line starts a ramble
    multi_hop: bool = True             # a second retrieval round led by the rule base (pipeline.evidence.gather)
    symbolic_answers: bool = True      # the rules prove the answer where the question parses into a goal
    # The model reads values the patterns and the question's focus leave unplaced into the rule vocabulary
    # (pipeline.readers.focus); None: as the model's profile says; off: such values stay value claims.
    lm_extraction: bool | None = None
    # The readers a draft is read by, in order (names of pipeline.readers.registry.READERS); None: every one but
    # the opt-in model reader, which lm_extraction adds. A reader left out is off.
    readers: tuple[str, ...] | None = None
    # A question whose words name no relation asks the one its meaning is clearly closest to, by the retriever's
    # sentence embedder (pipeline.question.relation_namer); off: such a question is answered from the passages alone.
    relation_namer: bool = True
    # Where no draft verifies and the rules prove nothing, a source sentence stating a value of the asked kind
    # in the question's words is quoted, checked like a draft (pipeline.answers.quoted); a total the question's
    # counts make of a rate one statement gives is computed and quoted with it (pipeline.answers.computed); off:
    # withheld instead. Never under the flag policy, whose user asked to see the model's own draft.
    quote_answers: bool = True


@dataclass
class Prepared:
    question: str
    context: QuestionContext      # retrieval rounds, focus, proof
    prompt: prompts.Prompt        # the first attempt's prompt, exactly as the model would see it

    @property
    def retrieved(self) -> list[PassageLike]:
        return self.context.candidates


class BareRuleBase:
    """Wraps a bare RuleBase so both it and symbolic.RuleBaseHolder expose ``.current``."""

    def __init__(self, rulebase: RuleBase | None):
        self.current = rulebase
