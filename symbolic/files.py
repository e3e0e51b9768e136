"""Rule files on disk: finding them, reading includes once each, the size limit, and letting go of them."""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from .errors import Location, RuleError, RuleErrors, source_line
from .parser import STATEMENT_START, ParsedFile, parse_text

# The most statements (rules, goals, facts, patterns, …) a rule base may have; 0 means no limit. Loading
# 20,000 rules takes ~15 s (bench/RESULTS.md "Rule engine"): the limit keeps a runaway file from
# holding a reload for minutes.
MAX_STATEMENTS = int(os.environ.get("VERIRAG_RULES_MAX_STATEMENTS", "50000"))


def collect(paths: list[Path], max_statements: int) -> tuple[list[ParsedFile], list[RuleError]]:
    """Parse the files and everything they include (relative to the including file), once each."""
    parsed: list[ParsedFile] = []
    errors: list[RuleError] = []
    done: set[Path] = set()
    count = [0]

    def visit(path: Path, chain: tuple[Path, ...], at: Location | None, at_text: str | None) -> None:
        rp = path.resolve()
        if rp in chain:
            cyc = " -> ".join(p.name for p in (*chain, rp))
            errors.append(RuleError(f"include cycle: {cyc}", at, source_line(at_text or "", at.line) if at else None))
            return
        if rp in done:
            return
        done.add(rp)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            msg = f"cannot read rule file {path}: {exc.strerror if isinstance(exc, OSError) else exc}"
            errors.append(RuleError(msg, at, source_line(at_text or "", at.line) if at else None))
            return
        starts = [mm.start() for mm in STATEMENT_START.finditer(text)]
        if max_statements and count[0] + len(starts) > max_statements:
            pos = starts[max_statements - count[0]]
            line = text.count("\n", 0, pos) + 1
            errors.append(RuleError(
                f"the rule base has more than {max_statements:,} statements (rules, goals, facts, patterns, …); "
                f"the limit is set by max_statements / VERIRAG_RULES_MAX_STATEMENTS (0: none)",
                Location(str(path), line, 1), source_line(text, line)))
            return
        count[0] += len(starts)
        pf, errs = parse_text(text, str(path))
        errors.extend(errs)
        for inc, loc in pf.includes:
            visit(path.parent / inc, (*chain, rp), loc, text)
        parsed.append(pf)

    for p in paths:
        visit(p, (), None, None)
    del visit   # a recursive closure is a reference cycle holding every parsed file until a full collection
    return parsed, errors


def rule_files(target: str | Path | list) -> list[Path]:
    if isinstance(target, (list, tuple)):
        return [f for t in target for f in rule_files(t)]
    p = Path(target)
    if p.is_dir():
        return sorted(p.rglob("*.rules"))
    if not p.exists():
        raise RuleErrors([RuleError(f"no such rule file or directory: {p}")])
    return [p]



def release_gradually(*lists: list, chunk: int = 2000) -> None:
    """Empty big lists a chunk at a time, letting other threads run in between: freeing the statements
    of 20,000 rules at once holds the interpreter for 0.4 s (every request waits)."""
    for lst in lists:
        while lst:
            del lst[-chunk:]
            time.sleep(0)


def content_version(texts: dict[str, str]) -> str:
    """12 hex digits of the SHA-256 of the rule files' paths and texts, in path order."""
    digest = hashlib.sha256()
    for path in sorted(texts):
        digest.update(path.encode("utf-8") + b"\0" + texts[path].encode("utf-8") + b"\0")
    return digest.hexdigest()[:12]
