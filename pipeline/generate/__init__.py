"""Prompts, model profiles, one generation of the answer loop and the citation guard."""
