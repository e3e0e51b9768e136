"""verirag symbolic: the rule language, forward/backward chaining with certainty factors, the Verifier."""
from .errors import Location, RuleError, RuleErrors
from .facts import Claim, Fact, Provenance
from .model import RelationSig
from .rulebase import RuleBase, load_rulebase
from .values import Date, Duration, Money, Percentage, Quantity, parse_value

__all__ = ["Claim", "Date", "Duration", "Fact", "Location", "Money", "Percentage", "Provenance", "Quantity",
           "RelationSig", "RuleBase", "RuleError", "RuleErrors", "load_rulebase", "parse_value"]
