"""Rule-file errors located at ``path:line:col`` with the offending line and a caret."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


class RuleError(Exception):
    """One error in a rule file; ``str()`` is ``path:line:col: message`` plus the line and a caret."""

    def __init__(self, message: str, location: Location | None = None, source_line: str | None = None,
                 severity: str = "error"):
        self.message = message
        self.location = location
        self.source_line = source_line
        self.severity = severity
        super().__init__(self.render())

    @property
    def path(self) -> str | None:
        return self.location.path if self.location else None

    @property
    def line(self) -> int | None:
        return self.location.line if self.location else None

    @property
    def column(self) -> int | None:
        return self.location.column if self.location else None

    def render(self) -> str:
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        if self.location is None:
            return prefix + self.message
        text = f"{self.location}: {prefix}{self.message}"
        if self.source_line is not None:
            line = self.source_line.rstrip("\n").expandtabs(1)
            text += f"\n  {line}\n  {' ' * max(self.location.column - 1, 0)}^"
        return text

    def __str__(self) -> str:
        return self.render()


class RuleErrors(RuleError):
    """Several errors at once (a whole file or rule base); ``.errors`` lists them in file order."""

    def __init__(self, errors: list[RuleError]):
        self.errors = list(errors)
        first = self.errors[0] if self.errors else None
        super().__init__(first.message if first else "no errors",
                         first.location if first else None, first.source_line if first else None)

    def render(self) -> str:
        return "\n".join(e.render() for e in getattr(self, "errors", []))


def source_line(text: str, line: int) -> str | None:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None
