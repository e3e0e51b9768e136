"""verirag pipeline: grounded prompts, claim extraction, and the verify-and-regenerate answer loop."""
from pipeline.defaults import DEFAULT_KB_DIR, DEFAULT_RULES_DIR
from pipeline.loop.answerer import Answerer
from pipeline.loop.config import AnswererConfig
from pipeline.loop.factory import default_answerer, verify
from pipeline.loop.verify import VerifyResult
from pipeline.types import AnswerResult, AskOptions, Attempt, Citation, ClaimReport, Violation

__all__ = ["Answerer", "AnswererConfig", "AnswerResult", "AskOptions", "Attempt", "Citation", "ClaimReport",
           "DEFAULT_KB_DIR", "DEFAULT_RULES_DIR", "Violation", "VerifyResult", "default_answerer", "verify"]
