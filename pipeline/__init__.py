"""verirag pipeline: grounded prompts, claim extraction, and the verify-and-regenerate answer loop."""
from pipeline.answerer import Answerer, AnswererConfig
from pipeline.defaults import DEFAULT_KB_DIR, DEFAULT_RULES_DIR
from pipeline.factory import default_answerer
from pipeline.types import AnswerResult, AskOptions, Attempt, Citation, ClaimReport, Violation
from pipeline.verify import VerifyResult, verify

__all__ = ["Answerer", "AnswererConfig", "AnswerResult", "AskOptions", "Attempt", "Citation", "ClaimReport",
           "DEFAULT_KB_DIR", "DEFAULT_RULES_DIR", "Violation", "VerifyResult", "default_answerer", "verify"]
