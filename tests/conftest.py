"""Test-wide settings: Triton runs in its CPU interpreter (read at kernel import), torch on one thread."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

torch.set_num_threads(int(os.environ.get("VERIRAG_TEST_THREADS", "1")))
