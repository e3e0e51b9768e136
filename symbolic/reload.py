"""Hot reload: swap in a freshly loaded rule base atomically, keeping the old one if the new fails."""
from __future__ import annotations

import ctypes
import gc
import threading
from pathlib import Path

from .errors import RuleError, RuleErrors
from .rulebase import RuleBase, load_rulebase, release_gradually


class RuleBaseHolder:
    """Holds the active rule base; ``reload()`` returns the errors (empty list on success).

    A reload loads the new rule base while ``current`` keeps serving the old one (call it from a worker
    thread: the API does), then swaps it in at once. Reloads take turns: a second one waits for the
    first. The old rule base is freed at the swap (it has no reference cycles), a chunk at a time."""

    def __init__(self, target: str | Path | list, *, max_statements: int | None = None):
        self.target = target
        self.max_statements = max_statements
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._current: RuleBase = self._load()   # the first load must succeed
        self.generation = 1
        self.last_errors: list[RuleError] = []
        self.reloading = False

    @property
    def current(self) -> RuleBase:
        return self._current

    def _load(self) -> RuleBase:
        """Load with the cyclic collector kept away: its full passes over 20,000 new rules stall every
        thread for ~0.5 s each. A loaded rule base is long-lived and acyclic, so it is frozen out of the
        collector's sight (gc.freeze; refcounting still frees it when it is replaced)."""
        gc.collect()      # what is frozen below is never collected: clear today's garbage first
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            rb = load_rulebase(self.target, max_statements=self.max_statements)
        except BaseException:
            if was_enabled:
                gc.enable()   # a failed load's garbage (tracebacks are cyclic) is collected as usual
            raise
        gc.freeze()
        if was_enabled:
            gc.enable()
        return rb

    def reload(self) -> list[RuleError]:
        with self._reload_lock:
            self.reloading = True
            try:
                return self._reload()
            finally:
                self.reloading = False

    def _reload(self) -> list[RuleError]:
        try:
            new = self._load()
        except RuleErrors as exc:
            errors = list(exc.errors)
        except RuleError as exc:
            errors = [exc]
        else:
            with self._lock:
                old, self._current = self._current, new
                self.generation += 1
            del new
            release_gradually(old.forward_rules, old.backward_rules, old.patterns, old.facts)
            del old
            _trim()
            self.last_errors = []
            return []
        self.last_errors = errors
        return errors


def _trim() -> None:
    """Hand freed memory back to the system (glibc keeps it for reuse otherwise)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass   # not glibc: the memory is reused by the process, only not returned
