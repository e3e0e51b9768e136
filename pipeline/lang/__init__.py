"""Word lists and cues as data, one folder per language (lang/en/*.toml, lang/zh/*.toml), loaded through one
Lexicon: a phrasing is added by editing data, not code (README "Word lists and cues")."""
from pipeline.lang.lexicon import (LANGUAGES, Lexicon, LexiconError, alternation, cue_table, phrase,
                                   word_pattern, words)

__all__ = ["LANGUAGES", "Lexicon", "LexiconError", "alternation", "cue_table", "phrase", "word_pattern", "words"]
