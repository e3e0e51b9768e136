"""Hot reload: swap in a freshly loaded rule base atomically, keeping the old one if the new fails."""
from __future__ import annotations

import threading
from pathlib import Path

from .errors import RuleError, RuleErrors
from .rulebase import RuleBase, load_rulebase


class RuleBaseHolder:
    """Holds the active rule base; ``reload()`` returns the errors (empty list on success)."""

    def __init__(self, target: str | Path | list):
        self.target = target
        self._lock = threading.Lock()
        self._current: RuleBase = load_rulebase(target)   # the first load must succeed
        self.generation = 1
        self.last_errors: list[RuleError] = []

    @property
    def current(self) -> RuleBase:
        return self._current

    def reload(self) -> list[RuleError]:
        try:
            new = load_rulebase(self.target)
        except RuleErrors as exc:
            errors = list(exc.errors)
        except RuleError as exc:
            errors = [exc]
        else:
            with self._lock:
                self._current = new
                self.generation += 1
            self.last_errors = []
            return []
        self.last_errors = errors
        return errors
