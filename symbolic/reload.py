"""Hot reload: swap in a freshly loaded rule base atomically, keeping the old one if the new fails."""
from __future__ import annotations

import ctypes
import gc
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from .errors import RuleError, RuleErrors
from .rulebase import RuleBase, load_rulebase, release_gradually

log = logging.getLogger(__name__)


class RuleBaseHolder:
    """Holds the active rule base; ``reload()`` returns the errors (empty list on success).

    A reload loads the new rule base while ``current`` keeps serving the old one (call it from a worker
    thread: the API does), then swaps it in at once. Reloads take turns: a second one waits for the
    first. A request that took the old rule base before the swap keeps it whole until it is done: the old one
    is emptied (a chunk at a time, so no thread stalls) only once nothing refers to it any more."""

    def __init__(self, target: str | Path | list, *, max_statements: int | None = None,
                 retirement: "Retirement | None" = None):
        self.target = target
        self.retirement = retirement or RETIRED
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

    @property
    def version(self) -> str:
        """The current rule base's content version (symbolic.rulebase.content_version)."""
        return self._current.version

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

    def reload(self, prepare: Callable[[RuleBase], None] | None = None) -> list[RuleError]:
        """Load the files again and swap the new rule base in. ``prepare(new)`` runs after the load and before
        the swap (the service reads its knowledge base's facts with the new rules there): if it raises, the
        reload fails as a whole, with its reason as the error, and the old rule base stays."""
        with self._reload_lock:
            self.reloading = True
            try:
                return self._reload(prepare)
            finally:
                self.reloading = False

    def _reload(self, prepare: Callable[[RuleBase], None] | None) -> list[RuleError]:
        try:
            new = self._load()
            if prepare is not None:
                prepare(new)
        except RuleErrors as exc:
            errors = list(exc.errors)
        except RuleError as exc:
            errors = [exc]
        except Exception as exc:  # noqa: BLE001 - prepare failed half-way: reported, the old rules stay
            log.warning("rule reload failed after loading: %s: %s", type(exc).__name__, exc)
            errors = [RuleError(f"the new rules loaded but could not be put in service ({type(exc).__name__}: "
                                f"{exc}); the previous rules keep serving")]
        else:
            with self._lock:
                old, self._current = self._current, new
                self.generation += 1
            del new
            self.retirement.add(old)
            del old
            self.last_errors = []
            return []
        self.last_errors = errors
        return errors


class Retirement:
    """Rule bases swapped out but perhaps still in use by a request that took them before the swap. Each is
    emptied (release_gradually: freeing 20,000 rules at once holds every thread for 0.4 s) once this list holds
    the only reference to it; one still referred to after ``max_wait_s`` is let go as it is (refcounting frees
    it whenever its last user is done), never emptied under a user."""

    def __init__(self, poll_s: float = 0.2, max_wait_s: float = 300.0) -> None:
        self.poll_s, self.max_wait_s = poll_s, max_wait_s
        self._items: list[tuple[float, RuleBase]] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.released = 0   # rule bases emptied so far (tests read it)

    def add(self, rb: RuleBase) -> None:
        with self._lock:
            self._items.append((time.monotonic(), rb))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="verirag-rules-retire", daemon=True)
                self._thread.start()

    def pending(self) -> int:
        with self._lock:
            return len(self._items)

    def sweep(self) -> int:
        """Empty the rule bases nobody uses any more; returns how many still wait."""
        done: list[RuleBase] = []
        with self._lock:
            keep: list[tuple[float, RuleBase]] = []
            now = time.monotonic()
            while self._items:
                since, rb = self._items.pop()
                # references now: this local and getrefcount's argument; any more is a request still using it
                if sys.getrefcount(rb) <= 2:
                    done.append(rb)
                elif now - since < self.max_wait_s:
                    keep.append((since, rb))
                del rb
            self._items = keep
            waiting = len(keep)
        for rb in done:
            release_gradually(rb.forward_rules, rb.backward_rules, rb.patterns, rb.facts)
        self.released += len(done)
        if done:
            del done, rb
            _trim()
        return waiting

    def _run(self) -> None:
        while True:
            time.sleep(self.poll_s)
            if self.sweep() == 0:
                with self._lock:
                    if not self._items:
                        self._thread = None
                        return


RETIRED = Retirement()


def _trim() -> None:
    """Hand freed memory back to the system (glibc keeps it for reuse otherwise)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass   # not glibc: the memory is reused by the process, only not returned
