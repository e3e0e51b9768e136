"""The CPU Dockerfile: what it runs exists and parses, its torch pin is the project's, and where docker is
installed the image builds and becomes ready (/readyz) (docker is absent on the CI machines: that test skips)."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_the_torch_it_preinstalls_is_the_version_the_project_pins():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pinned = next(d for d in deps if d.startswith("torch=="))
    assert re.findall(r"whl/cpu (torch==[\d.]+)", DOCKERFILE) == [pinned]


def test_its_commands_are_verirags_own_and_parse():
    from api.cli import build_parser

    cmd = json.loads(re.search(r"^CMD (\[.*\])$", DOCKERFILE, re.M).group(1))
    assert cmd[0] == ".venv/bin/verirag"
    args = build_parser().parse_args(cmd[1:])
    assert (args.host, args.port) == ("0.0.0.0", 8000)
    ingest = re.search(r"\.venv/bin/verirag (ingest [^\n#]*)", DOCKERFILE).group(1)
    assert build_parser().parse_args(shlex.split(ingest)).command == "ingest"
    assert (ROOT / "install.sh").stat().st_mode & 0o111          # RUN ./install.sh
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".venv" in ignored and ".git" in ignored              # the host's venv never lands in the image


def _docker_daemon() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(not _docker_daemon(), reason="no docker daemon on this machine (docker absent or not running)")
@pytest.mark.slow
def test_the_image_builds_and_serves(tmp_path):
    tag = "verirag-test:ci"
    subprocess.run(["docker", "build", "-t", tag, str(ROOT)], check=True, timeout=3600)
    run = subprocess.run(["docker", "run", "-d", "-p", "18000:8000", tag], check=True, capture_output=True,
                         text=True)
    container = run.stdout.strip()
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:18000/readyz", timeout=5) as r:
                    assert r.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
    finally:
        subprocess.run(["docker", "rm", "-f", container], check=False, capture_output=True)


def test_the_healthcheck_probes_readiness_on_a_route_the_app_serves():
    health = re.search(r"^HEALTHCHECK .*?CMD\s*\\\n(.*)$", DOCKERFILE, re.M | re.S).group(1)
    url = re.search(r"urlopen\('([^']+)'", health).group(1)
    assert url == "http://127.0.0.1:8000/readyz"                   # ready, not merely alive (/healthz)
    from api.app import create_app

    assert "get" in create_app().openapi()["paths"]["/readyz"]


def test_it_runs_as_a_user_it_creates_not_root_and_hands_it_the_index():
    users = re.findall(r"^USER (\S+)$", DOCKERFILE, re.M)
    assert users == ["verirag"]
    assert re.search(r"useradd [^\n]*--uid (\d+)[^\n]* verirag$", DOCKERFILE, re.M).group(1) != "0"
    before, after = DOCKERFILE.split("\nUSER verirag\n")
    assert "chown -R verirag:verirag /app/.verirag" in before        # the index it re-ingests is its own
    assert ".venv/bin/verirag ingest kb" in after                      # and built by it, not by root
    assert re.search(r"^CMD ", after, re.M) and "install.sh" not in after


def _install_args(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """The pip commands install.sh runs, with a stand-in python that records them (nothing is installed)."""
    import os

    work = tmp_path / "repo"
    (work / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "install.sh", work / "install.sh")
    log = tmp_path / "calls.txt"
    fake = work / ".venv" / "bin" / "python"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n", encoding="utf-8")
    fake.chmod(0o755)
    subprocess.run(["bash", str(work / "install.sh")], check=True, env={**os.environ, **env}, timeout=60)
    return log.read_text(encoding="utf-8").splitlines()


def test_the_image_installs_no_test_extras(tmp_path):
    assert re.search(r"RUN VERIRAG_EXTRAS= \./install\.sh", DOCKERFILE)
    runtime = _install_args(tmp_path / "runtime", {"VERIRAG_EXTRAS": ""})
    assert "-m pip install -q -e ." in runtime and not any("[test]" in c for c in runtime)
    default = _install_args(tmp_path / "default", {})
    assert "-m pip install -q -e .[test]" in default      # a developer's ./install.sh keeps the test tools
