"""The house's import structure (pyproject.toml [tool.importlinter]): no import circles at any level, the
engines independent beneath the pipeline, the pipeline's stages layered; and the pipeline's shape (issue 46)."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "pipeline"


def test_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    from importlinter.cli import lint_imports

    cwd = os.getcwd()
    os.chdir(ROOT)          # import-linter reads pyproject.toml from the working folder
    try:
        status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.search(r"Contracts: (\d+) kept, 0 broken", out) and "No import circles anywhere" in out


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
