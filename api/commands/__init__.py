"""Subcommands of the verirag CLI, one module each."""
