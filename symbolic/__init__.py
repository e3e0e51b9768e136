"""verirag symbolic: the rule language, forward/backward chaining with certainty factors, the Verifier."""
from .backward import BackwardChainer, Node
from .errors import Location, RuleError, RuleErrors
from .facts import Claim, Fact, Provenance
from .forward import ForwardChainer, ForwardResult, Violation
from .model import RelationSig
from .reload import RuleBaseHolder
from .rulebase import RuleBase, load_rulebase
from .values import Date, Duration, Money, Percentage, Quantity, parse_value
from .verifier import ClaimVerdict, Verification, Verifier

__all__ = ["BackwardChainer", "Claim", "ClaimVerdict", "Date", "Duration", "Fact", "ForwardChainer",
           "ForwardResult", "Location", "Money", "Node", "Percentage", "Provenance", "Quantity", "RelationSig",
           "RuleBase", "RuleBaseHolder", "RuleError", "RuleErrors", "Verification", "Verifier", "Violation",
           "load_rulebase", "parse_value"]
