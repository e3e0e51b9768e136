"""docs/cookbook/: every recipe's rule tests pass as `verirag rules test` runs them, and symbolic/LANGUAGE.md's
"Cookbook by policy shape" links every recipe."""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
COOKBOOK = REPO / "docs" / "cookbook"
FOLDERS = sorted(p.name for p in COOKBOOK.iterdir() if p.is_dir())
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed in ", re.MULTILINE)


def _cases(folder: str) -> list[str]:
    """The case names of a recipe's test files."""
    names = []
    for path in sorted((COOKBOOK / folder / "tests").glob("*.yaml")):
        names += [str(c["name"]) for c in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]]
    return names


def _rules_test(folder: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "api.cli", "rules", "test", f"docs/cookbook/{folder}/tests"],
                          check=False, cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess]:
    """`verirag rules test docs/cookbook/<folder>/tests` for every folder, as many at a time as there are CPUs
    (each run is mostly one interpreter start, about 2 s)."""
    workers = max(1, min(len(FOLDERS), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                         else os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        return dict(zip(FOLDERS, pool.map(_rules_test, FOLDERS)))


def test_the_cookbook_has_its_shapes():
    assert {"limit", "approval_chain", "date_window", "supersession", "local_supplement", "default_rate",
            "table_units", "greater_of", "first_match", "purchase_window"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_recipe_is_complete(folder):
    d = COOKBOOK / folder
    assert (d / "README.md").is_file()
    assert list(d.glob("*.rules")), f"{folder} has no .rules file"
    docs = list((d / "kb").glob("**/*.md"))
    assert 1 <= len(docs) <= 3, f"{folder}/kb has {len(docs)} documents"
    for path in sorted((d / "tests").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert spec["rules"] == ".." and spec["kb"] == "../kb", f"{path} does not point at its recipe"
    cases = _cases(folder)
    assert 3 <= len(cases) <= 6, f"{folder} has {len(cases)} cases"


@pytest.mark.parametrize("folder", FOLDERS)
def test_recipe_cases_pass(folder, runs):
    run = runs[folder]
    names = _cases(folder)
    report = f"\n{run.stdout}\n{run.stderr}"
    assert run.returncode == 0, report
    summary = SUMMARY.search(run.stdout)
    assert summary, report
    assert (int(summary[1]), int(summary[2])) == (len(names), 0), report
    passed = [line for line in run.stdout.splitlines() if line.startswith("PASS  ")]
    assert len(passed) == len(names) and "FAIL  " not in run.stdout, report
    for name in names:
        assert any(line[6:].startswith(name) for line in passed), f"case {name!r} did not pass{report}"


@pytest.mark.parametrize("folder", FOLDERS)
def test_recipe_checks_a_wrong_value(folder):
    """Every recipe has a case where a wrong value must not pass: contradicted or violates_rule."""
    expects = []
    for path in sorted((COOKBOOK / folder / "tests").glob("*.yaml")):
        expects += [c["expect"] for c in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]]
    assert {"contradicted", "violates_rule"} & set(expects)


def test_language_reference_links_every_recipe():
    doc = (REPO / "symbolic" / "LANGUAGE.md").read_text(encoding="utf-8")
    start = doc.index("## Cookbook by policy shape")
    end = doc.index("## Errors and warnings (`verirag rules check`)")
    assert start < end, "the cookbook section comes just before the errors and warnings"
    section = doc[start:end]
    assert "\n## " not in section[3:], "the cookbook section is followed directly by the errors and warnings"
    for folder in FOLDERS:
        assert f"docs/cookbook/{folder}/" in section, f"LANGUAGE.md's cookbook does not link {folder}"
        assert f"](../docs/cookbook/{folder}/)" in section, f"the link to {folder} is not relative to symbolic/"
