"""Word lists and cues as data, one file per language (en.toml, zh.toml), loaded through one Lexicon."""
