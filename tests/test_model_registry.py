"""neural.model_registry: names resolve to verified files; a corrupt, partial or tampered model is never loaded."""
from __future__ import annotations

import hashlib
import json
import sys

import pytest

from api.cli import main
from neural import model_registry as reg
from neural.errors import ModelLoadError


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIRAG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture()
def split_model(tmp_path, monkeypatch, cache):
    """A two-part model in two importable fake packages, registered as 'tiny-split'."""
    parts = [b"GGUF" + bytes(range(256)) * 40, b"tail" * 1000]
    for i, data in enumerate(parts, 1):
        pkg = tmp_path / "site" / f"fake_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part0{i}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(parts)
    entry = reg.ModelEntry("tiny-split", "test", "MIT", ("fake-part1==1", "fake-part2==1"),
                           (("fake_part1", "data/part01.bin"), ("fake_part2", "data/part02.bin")),
                           hashlib.sha256(whole).hexdigest(), len(whole))
    monkeypatch.setitem(reg.REGISTRY, entry.name, entry)
    return entry, tmp_path / "site", whole


def test_pull_joins_the_parts_and_resolve_returns_the_verified_file(split_model, cache):
    entry, _site, whole = split_model
    path = reg.pull(entry.name, log=lambda m: None)
    assert path == cache / "models" / "tiny-split.gguf"
    assert path.read_bytes() == whole
    assert reg.resolve_model("tiny-split") == str(path)
    assert list((cache / "models").iterdir()) == [path]          # no temp file left behind


def test_a_tampered_part_is_refused_and_leaves_no_model_file(split_model, cache):
    entry, site, _whole = split_model
    (site / "fake_part2" / "data" / "part02.bin").write_bytes(b"tail" * 999 + b"evil")
    with pytest.raises(ModelLoadError, match="sha256"):
        reg.pull(entry.name, log=lambda m: None)
    assert not (cache / "models" / "tiny-split.gguf").exists()
    assert [p.name for p in (cache / "models").iterdir()] == []


def test_a_partial_or_modified_file_is_never_loaded(split_model, cache):
    entry, _site, whole = split_model
    path = reg.pull(entry.name, log=lambda m: None)
    path.write_bytes(whole[:-10])                                 # truncated after a good pull
    with pytest.raises(ModelLoadError, match="partial or corrupt"):
        reg.resolve_model(entry.name)
    path.write_bytes(whole[:-1] + b"X")                           # same size, other bytes, new mtime
    with pytest.raises(ModelLoadError, match="refusing to load"):
        reg.resolve_model(entry.name)


def test_verified_files_are_not_hashed_again(split_model, cache, monkeypatch):
    entry, _site, _whole = split_model
    path = reg.pull(entry.name, log=lambda m: None)
    calls = []
    monkeypatch.setattr(reg, "sha256_file", lambda p: calls.append(p) or entry.sha256)
    reg.resolve_model(entry.name)
    assert calls == []                                            # the stamp from pull() is reused
    path.touch()                                                  # a changed mtime forces a re-check
    reg.resolve_model(entry.name)
    assert calls == [path]


def test_not_pulled_and_unknown_names_say_what_to_do(split_model, cache):
    with pytest.raises(ModelLoadError, match="verirag models pull tiny-split"):
        reg.resolve_model("tiny-split")
    with pytest.raises(ModelLoadError, match="unknown model 'gpt-4o'"):
        reg.resolve_model("gpt-4o")
    with pytest.raises(ModelLoadError, match="unknown model"):
        reg.pull("gpt-4o")
    assert reg.resolve_model("some/dir/model.gguf") == "some/dir/model.gguf"   # paths pass through


def test_pip_failure_is_a_clear_error(split_model, cache, monkeypatch):
    entry = reg.ModelEntry("not-there", "test", "MIT", ("no-such-package-xyz==0",), (("no_such_pkg_xyz", "m.gguf"),),
                           "0" * 64, 1)
    monkeypatch.setitem(reg.REGISTRY, entry.name, entry)

    class Done:
        returncode, stderr = 1, "ERROR: No matching distribution found for no-such-package-xyz==0"
    monkeypatch.setattr(reg.subprocess, "run", lambda *a, **k: Done())
    with pytest.raises(ModelLoadError, match="No matching distribution"):
        reg.pull("not-there", log=lambda m: None)


def test_the_default_model_is_the_installed_package_file():
    path = reg.resolve_model(None)
    assert path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert reg.REGISTRY[reg.DEFAULT_MODEL].default


def test_cli_models_list_and_path(split_model, cache, capsys):
    assert main(["models", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["smollm2-135m"]["installed"] and rows["smollm2-135m"]["licence"] == "Apache-2.0"
    assert "no licence file" in rows["qwen2.5-coder-0.5b"]["licence"]
    assert rows["smollm2-135m"]["cpu_quantization"] == "int8" and rows["tiny-split"]["cpu_quantization"] == "none"
    assert rows["tiny-split"]["installed"] is False
    assert main(["models", "list"]) == 0
    assert "on CPU (--quantization auto): int8 weights, two-pass activations" in capsys.readouterr().out
    assert main(["models", "path", "tiny-split"]) == 1
    assert "verirag models pull tiny-split" in capsys.readouterr().err
    assert main(["models", "pull", "tiny-split"]) == 0
    assert capsys.readouterr().out.strip().endswith("tiny-split.gguf")
    assert main(["models", "path", "nope"]) == 1
