"""Builds llama.cpp's llama-bench and llama-batched-bench once, CPU only, from the llama-cpp-python sdist, cached.

A benchmark tool, not a dependency: the source comes from the registry's llama-cpp-python source distribution
(which vendors llama.cpp under vendor/llama.cpp), fetched with ``pip download`` when not already there, and the
two binaries land in ``bench/.llamacpp/<version>-<key>/bin`` (ignored by git). The key hashes the sdist's bytes
and the CMake flags, so a new version or a changed flag builds into a fresh folder and never reuses a stale one.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".llamacpp"
SDIST_VERSION = "0.3.36"
TARGETS = ("llama-bench", "llama-batched-bench")
# CPU only: no GPU backends, no BLAS (ggml's own kernels are what we compare with), no network code.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=ON",
    "-DGGML_CUDA=OFF",
    "-DGGML_METAL=OFF",
    "-DGGML_VULKAN=OFF",
    "-DGGML_BLAS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
)


class BuildSkipped(RuntimeError):
    """llama.cpp cannot be built here (no compiler, no cmake, no source): the caller prints why and skips."""


@dataclass(frozen=True)
class Binaries:
    bench: Path
    batched_bench: Path


def missing_tools(which=shutil.which) -> list[str]:
    """The build tools absent from PATH: cmake, and a C and a C++ compiler (any of the usual names)."""
    missing = []
    if which("cmake") is None:
        missing.append("cmake")
    if not any(which(name) for name in ("cc", "gcc", "clang")):
        missing.append("a C compiler (cc/gcc/clang)")
    if not any(which(name) for name in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler (c++/g++/clang++)")
    return missing


def cache_key(sdist: Path, flags: tuple[str, ...] = CMAKE_FLAGS) -> str:
    """12 hex digits over the sdist's bytes and the CMake flags: same source and flags, same folder."""
    digest = hashlib.sha256()
    with sdist.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    digest.update("\0".join(flags).encode())
    return digest.hexdigest()[:12]


def build_dir(sdist: Path, cache_dir: Path = CACHE_DIR, flags: tuple[str, ...] = CMAKE_FLAGS) -> Path:
    return cache_dir / f"{SDIST_VERSION}-{cache_key(sdist, flags)}"


def find_sdist(cache_dir: Path = CACHE_DIR) -> Path | None:
    found = sorted((cache_dir / "sdist").glob(f"llama_cpp_python-{SDIST_VERSION}.tar.gz"))
    return found[0] if found else None


def fetch_sdist(cache_dir: Path = CACHE_DIR) -> Path:
    """The sdist under ``cache_dir/sdist``, downloaded through pip (the registry's ordinary client) when absent."""
    if (found := find_sdist(cache_dir)) is not None:
        return found
    where = cache_dir / "sdist"
    where.mkdir(parents=True, exist_ok=True)
    print(f"downloading llama-cpp-python=={SDIST_VERSION} source (~76 MB) into {where} ...", flush=True)
    cmd = [sys.executable, "-m", "pip", "download", f"llama-cpp-python=={SDIST_VERSION}", "--no-deps",
           "--no-binary", ":all:", "-d", str(where)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or (found := find_sdist(cache_dir)) is None:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BuildSkipped(f"pip download of llama-cpp-python=={SDIST_VERSION} failed: {last[0]}")
    return found


def installed(folder: Path) -> Binaries | None:
    bins = Binaries(folder / "bin" / "llama-bench", folder / "bin" / "llama-batched-bench")
    return bins if bins.bench.is_file() and bins.batched_bench.is_file() else None


def ensure_built(jobs: int = 1, cache_dir: Path = CACHE_DIR, which=shutil.which) -> Binaries:
    """The two binaries, built on the first call (``nice -n 19``, ``jobs`` compile jobs) and reused after; a
    cached build is used even where no compiler is left. Raises BuildSkipped when a build is needed and
    impossible here (no cmake or compiler, no sdist and pip cannot fetch it)."""
    sdist = find_sdist(cache_dir)
    if sdist is not None and (bins := installed(build_dir(sdist, cache_dir))) is not None:
        return bins
    if missing := missing_tools(which):
        raise BuildSkipped("cannot build llama.cpp here: missing " + ", ".join(missing))
    sdist = sdist or fetch_sdist(cache_dir)
    folder = build_dir(sdist, cache_dir)
    if (bins := installed(folder)) is not None:
        return bins
    work = folder / "work"
    src = work / f"llama_cpp_python-{SDIST_VERSION}" / "vendor" / "llama.cpp"
    if not (src / "CMakeLists.txt").is_file():
        print(f"unpacking {sdist.name} into {work} ...", flush=True)
        work.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if "/vendor/llama.cpp/" in m.name + "/"]
            tar.extractall(work, members=members, filter="data")
    nice = ["nice", "-n", "19"] if which("nice") else []
    out = work / "build"
    log = folder / "build.log"
    print(f"building {', '.join(TARGETS)} (CPU only, -j{jobs}, nice 19; 10-40 minutes on 2 shared cores); log: {log}",
          flush=True)
    with log.open("w") as f:
        for cmd in ([*nice, "cmake", "-S", str(src), "-B", str(out), *CMAKE_FLAGS],
                    [*nice, "cmake", "--build", str(out), "--target", *TARGETS, "-j", str(jobs)]):
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            if subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode != 0:
                tail = log.read_text(errors="replace").splitlines()[-15:]
                raise BuildSkipped("llama.cpp build failed (" + str(log) + "):\n" + "\n".join(tail))
    (folder / "bin").mkdir(exist_ok=True)
    for name in TARGETS:
        shutil.copy2(out / "bin" / name, folder / "bin" / name)
    shutil.rmtree(work, ignore_errors=True)  # ~200 MB of sources and objects; the binaries are static
    bins = installed(folder)
    assert bins is not None
    return bins


if __name__ == "__main__":  # build only: `python bench/llamacpp_build.py [jobs]`
    try:
        print(ensure_built(int(sys.argv[1]) if len(sys.argv) > 1 else 1))
    except BuildSkipped as why:
        sys.exit(f"skipped: {why}")
