"""Where the embedded default domain lives: the repo's kb/ and rules/, or in an installed wheel the copies its
build put in pipeline/domain/ (setup.py); the one place these paths are set."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _domain(name: str) -> Path:
    packaged = Path(__file__).resolve().parent / "domain" / name
    return packaged if packaged.is_dir() else REPO_ROOT / name


DEFAULT_KB_DIR = _domain("kb")
DEFAULT_RULES_DIR = _domain("rules")
# Tokens per answer attempt: answers are one or two sentences (~20-40 tokens); a larger cap only
# lets a 135M model run on (bench/answer_quality.py, bench/RESULTS.md "Pipeline").
DEFAULT_MAX_TOKENS = 64
# Passages retrieved per question: the candidates the prompt's source budget is packed from (whole while
# they fit, best first); more than fit is cheap (retrieval is milliseconds) and lets the packing skip a
# passage too large for what is left (bench/RESULTS.md "Context").
DEFAULT_TOP_K = 8
# Prompt-lookup speculative decoding for the engine default_answerer builds (0 = off): answers quote their
# passages, so proposed tokens are often accepted; greedy output is unchanged. One request at a time (CLI
# ask, eval), so none of the batching cost that keeps it off by default in the server (bench/RESULTS.md
# "Pipeline": 10 eval questions 67.9 -> 33.3 s, identical answers).
DEFAULT_SPECULATIVE_TOKENS = 4
MAX_SPECULATIVE_TOKENS = 16  # the most any entry point (ask, serve) accepts


def default_index_dir(kb_dir: str | Path) -> Path:
    """The index next to the KB (retrieval's convention: ``<kb>/../.verirag/index``)."""
    from retrieval import default_index_dir as _retrieval_default
    return _retrieval_default(kb_dir)
