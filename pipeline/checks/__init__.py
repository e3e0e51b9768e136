"""Whether a draft answers the question, for whom, citing what: gap checks over its claims and the verifier's verdicts."""
