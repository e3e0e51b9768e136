"""The `verirag` command line: one subcommand per module under api/commands/."""
from __future__ import annotations

import argparse
import importlib
import logging
import os
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
    for sub in subparsers.choices.values():  # every command that may load a model prints its load stages
        if "--quiet" not in sub._option_string_actions:
            sub.add_argument("--quiet", action="store_true", help="no model-load stage timings on stderr")
    return parser


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (a test's capture, a redirected stream), not the one
    that was current when the handler was made."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def show_load_stages(show: bool = True) -> None:
    """Model-load stages (neural.load_progress) as ``verirag: load: <stage> <seconds>`` lines on stderr."""
    log = logging.getLogger("verirag.load")
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("verirag: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO if show else logging.WARNING)
    log.propagate = False  # a server's root handler would print each line a second time


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    show_load_stages(not getattr(args, "quiet", False))
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # here, so a closed pipe is caught below and not at interpreter exit
        return status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`verirag search ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 141  # 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
