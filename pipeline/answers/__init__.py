"""Answers written without the model: composed proofs, quoted source statements, computed totals, corrections."""
