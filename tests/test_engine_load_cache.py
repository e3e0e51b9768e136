"""Cold start: one fast GGUF parse (checked against gguf-py's reader), and the load cache (what it keeps, that
a warm start equals a cold one, corrupt entries, an unwritable folder, two first runs at once)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as QT
from gguf import GGUFReader

from neural import Engine, EngineConfig, ModelLoadError, SamplingParams
from neural.load_progress import LoadProgress
from neural.loader import load_model
from neural.loader.cache import SOURCE_ENTRY, LoadCache, model_file_key
from neural.loader.gguf_cached import MODEL_ENTRY, WEIGHTS_ENTRY
from neural.gguf_file import GGUFFile
from tests.test_engine_quantized import write_tiny_gguf

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def tiny(tmp_path) -> Path:
    return Path(write_tiny_gguf(tmp_path / "tiny.gguf", "qwen2", {"ffn_down": QT.Q8_0, "attn_output": QT.F32}))


def dense(path: Path, cache_root: Path | None = None) -> dict[str, torch.Tensor]:
    progress = LoadProgress()
    if cache_root is None:
        return dict(load_model(path, progress=progress).weights)
    from neural.loader.gguf_cached import load_gguf_cached

    return dict(load_gguf_cached(path, False, progress, LoadCache(path, cache_root)).weights)


def test_gguf_file_reads_what_gguf_py_reads(tiny) -> None:
    ours, ref = GGUFFile(tiny), GGUFReader(str(tiny))
    for key, field in ref.fields.items():
        if not key.startswith("GGUF."):  # the reader's own pseudo-fields (version, counts)
            assert ours.fields[key] == pytest.approx(field.contents()), key
    assert [t.name for t in ours.tensors] == [t.name for t in ref.tensors]
    for a, b in zip(ours.tensors, ref.tensors):
        assert a.tensor_type == b.tensor_type and a.shape == tuple(int(d) for d in b.shape)
        assert a.data.dtype == b.data.dtype and np.array_equal(a.data, b.data), a.name


def test_truncated_and_garbage_gguf_are_clear_errors(tiny, tmp_path) -> None:
    data = tiny.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 100])  # header intact, last tensor short
    with pytest.raises(ModelLoadError, match="past the end of the file"):
        GGUFFile(cut)
    cut.write_bytes(data[:200])  # inside the metadata
    with pytest.raises(ModelLoadError, match="truncated"):
        GGUFFile(cut)
    for junk in (b"", b"GGUF", b"NOPE" + data[4:], data[:4] + b"\x09\x00\x00\x00" + data[8:]):
        cut.write_bytes(junk)
        with pytest.raises(ModelLoadError, match="GGUF"):
            GGUFFile(cut)


def test_warm_load_reads_the_cache_and_equals_the_cold_one(tiny, tmp_path) -> None:
    uncached = dense(tiny)
    cold = dense(tiny, tmp_path / "c")
    entry = tmp_path / "c" / model_file_key(tiny)
    assert sorted(p.name for p in entry.iterdir()) == [MODEL_ENTRY, SOURCE_ENTRY, WEIGHTS_ENTRY]  # no temp files left
    progress = LoadProgress()
    from neural.loader.gguf_cached import load_gguf_cached

    warm = dict(load_gguf_cached(tiny, False, progress, LoadCache(tiny, tmp_path / "c")).weights)
    assert "parse GGUF" not in [stage for stage, _ in progress.timings]  # the file was not read at all
    assert "from the load cache" in progress.notes["weights"]
    for weights in (cold, warm):
        assert weights.keys() == uncached.keys()
        for name, t in uncached.items():
            assert torch.equal(weights[name], t), name


def test_cached_weights_are_read_only_when_iterated(tiny, tmp_path) -> None:
    from neural.loader.gguf_cached import load_gguf_cached

    dense(tiny, tmp_path)
    progress = LoadProgress()
    loaded = load_gguf_cached(tiny, False, progress, LoadCache(tiny, tmp_path))
    assert "weights" not in [s for s, _ in progress.timings]  # an engine with a cached int8 state stops here
    next(loaded.weights)
    assert "weights" in [s for s, _ in progress.timings]


def test_an_edited_model_file_misses_the_cache(tiny) -> None:
    key = model_file_key(tiny)
    os.utime(tiny, ns=(1, 1))
    assert model_file_key(tiny) != key


def test_corrupt_entries_are_rebuilt_with_a_warning(tiny, tmp_path) -> None:
    reference = dense(tiny, tmp_path)
    entry = tmp_path / model_file_key(tiny)
    weights = entry / WEIGHTS_ENTRY
    weights.write_bytes(weights.read_bytes()[:-64])  # truncated
    (entry / MODEL_ENTRY).write_text("{not json")
    with pytest.warns(UserWarning, match="corrupt") as record:
        again = dense(tiny, tmp_path)
    assert len(record) == 2
    for name, t in reference.items():
        assert torch.equal(again[name], t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt entries read back cleanly
        dense(tiny, tmp_path)
        assert LoadCache(tiny, tmp_path).read_tensors(WEIGHTS_ENTRY) is not None


def test_unwritable_cache_folder_runs_without_cache(tiny, tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="running without a load cache") as record:
        weights = dense(tiny, blocker / "cache")
    assert len(record) == 1  # one warning, not one per entry
    assert weights.keys() == dense(tiny).keys()


def test_two_first_runs_at_once_leave_one_complete_entry(tiny, tmp_path) -> None:
    script = textwrap.dedent(f"""
        import sys, torch
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from neural.load_progress import LoadProgress
        from neural.loader.cache import LoadCache
        from neural.loader.gguf_cached import load_gguf_cached
        path = Path({str(tiny)!r})
        w = dict(load_gguf_cached(path, False, LoadProgress(), LoadCache(path, Path({str(tmp_path / "c")!r}))).weights)
        print(sum(float(t.double().sum()) for t in w.values()))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1]
    entry = tmp_path / "c" / model_file_key(tiny)
    assert sorted(p.name for p in entry.iterdir()) == [MODEL_ENTRY, SOURCE_ENTRY, WEIGHTS_ENTRY]
    for name, t in dense(tiny).items():
        assert torch.equal(dense(tiny, tmp_path / "c")[name], t)


@pytest.mark.slow
def test_default_model_warm_start_matches_cold_and_cli_prints_stages(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("VERIRAG_CACHE_DIR", str(tmp_path))
    prompts = ["The capital of France is", "def add(a, b):"]
    sp = SamplingParams(max_tokens=12, ignore_eos=True)
    cold = Engine(EngineConfig())
    cold_out = [o.token_ids for o in cold.generate(prompts, sp)]
    assert "parse GGUF" in [s for s, _ in cold.load_progress.timings]
    del cold
    warm = Engine(EngineConfig())
    assert "parse GGUF" not in [s for s, _ in warm.load_progress.timings]
    assert [o.token_ids for o in warm.generate(prompts, sp)] == cold_out
    assert warm.tokenizer.to_dict() == Engine(EngineConfig(load_cache=False)).tokenizer.to_dict()
    del warm

    from api.cli import main

    assert main(["generate", "Hi", "--max-tokens", "1"]) == 0
    err = capsys.readouterr().err
    assert "verirag: load: config + tokenizer" in err and "(from the load cache)" in err and "ready in" in err
    assert main(["generate", "Hi", "--max-tokens", "1", "--quiet"]) == 0
    assert "load:" not in capsys.readouterr().err


def test_entries_of_a_removed_or_changed_model_file_are_pruned(tiny, tmp_path) -> None:
    root = tmp_path / "c"
    moved = tmp_path / "old-install" / "tiny.gguf"
    moved.parent.mkdir()
    moved.write_bytes(tiny.read_bytes())
    edited = tmp_path / "edited.gguf"
    edited.write_bytes(tiny.read_bytes())
    dense(moved, root)
    dense(edited, root)
    old, first_edit = LoadCache(moved, root).dir, LoadCache(edited, root).dir
    legacy = root / "legacy-entry"  # written before entries recorded their model file: not ours to judge
    legacy.mkdir()
    assert {old, first_edit} <= set(root.iterdir())

    moved.unlink()                   # a reinstall removed it
    os.utime(edited, ns=(1, 1))      # an edit re-dated it: its old entry can never be hit again
    warm = dense(tiny, root)         # a new first load prunes both
    assert sorted(p.name for p in root.iterdir()) == sorted([LoadCache(tiny, root).dir.name, "legacy-entry"])
    assert dense(tiny, root).keys() == warm.keys()
    assert dense(edited, root)       # the edited file loads (and caches) afresh
    assert LoadCache(edited, root).dir.is_dir() and LoadCache(tiny, root).dir.is_dir()
