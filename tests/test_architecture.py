"""The house's import structure (pyproject.toml [tool.importlinter]): no import circles at any level, the
engines independent beneath the pipeline, the pipeline's stages layered; and the pipeline's shape (issue 46)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "pipeline"


def test_import_contracts_hold() -> None:
    # in a process of its own: import-linter configures logging with dictConfig, which disables every logger
    # that exists already (the CLI's load-stage lines, in tests that run after this one)
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: (\d+) kept, 0 broken", done.stdout) and "No import circles anywhere" in done.stdout


def test_the_pipeline_is_stages_with_little_at_its_top() -> None:
    top = sorted(p.name for p in PIPELINE.iterdir() if p.is_file() and p.suffix == ".py")
    stages = sorted(p.name for p in PIPELINE.iterdir() if (p / "__init__.py").is_file())
    assert len(top) <= 8, top
    assert {"text", "lang", "question", "proof", "readers", "evidence", "checks", "answers", "generate",
            "loop"} <= set(stages), stages
    for stage in stages:            # a module's one-line docstring says what it owns
        for module in (PIPELINE / stage).glob("*.py"):
            source = module.read_text(encoding="utf-8")
            assert source.lstrip().startswith('"""'), f"{module.relative_to(ROOT)} has no module docstring"
