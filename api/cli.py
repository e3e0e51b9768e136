"""The `verirag` command line: one subcommand per module under api/commands/."""
from __future__ import annotations

import argparse
import importlib
import sys

# Each module under api/commands/ exposes ``register(subparsers)`` adding its subcommand(s) with
# ``set_defaults(func=...)``; ``func(args) -> int`` is the exit status. Modules are listed here, not
# discovered, so a broken optional command cannot hide the others.
COMMAND_MODULES = [
    "api.commands.generate",
    "api.commands.ingest",
    "api.commands.search",
    "api.commands.rules",
    "api.commands.ask",
    "api.commands.serve",
    "api.commands.eval",
    "api.commands.models",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verirag", description="Neuro-symbolic RAG engine")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command not built yet
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
