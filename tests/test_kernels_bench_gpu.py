"""bench/gpu.py runs its CPU-safe parts: the plan, argument errors, and a clear exit without CUDA."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "gpu.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_dry_run_prints_the_byte_counts() -> None:
    res = _run("--dry-run", "--batch", "64", "--context", "4096")
    assert res.returncode == 0, res.stderr
    # 2 (K,V) * 64 * 4096 * 8 kv heads * 128 * 2 bytes = 1.074 GB
    assert "Llama-3-8B (32/8 heads, d128): K+V bytes per decode call = 1.074 GB" in res.stdout


def test_bad_arguments_are_rejected() -> None:
    res = _run("--batch", "0")
    assert res.returncode == 2 and "must be positive" in res.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_without_cuda_it_says_so() -> None:
    res = _run()
    assert res.returncode == 2 and "needs a CUDA GPU" in res.stdout
