"""The type checker runs with the tests: mypy over every package ([tool.mypy] in pyproject.toml), no errors."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"neural", "retrieval", "symbolic", "pipeline", "api"}


def test_mypy_checks_every_package() -> None:
    # a package dropped from the list would pass the run below unchecked
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert set(config["files"]) == PACKAGES


def test_mypy_is_clean() -> None:
    # cold (a fresh clone, as in CI) ~1.5-2 min on 2 cores; warm (the git-ignored .mypy_cache) seconds
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
