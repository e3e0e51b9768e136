# verirag on the CPU: `docker build -t verirag .` then `docker run -p 8000:8000 verirag`
# (the embedded sample KB, default rules and default model; mount your own with
#  -v /path/kb:/kb -v /path/rules:/rules and add `--kb /kb --rules /rules` to the command; the index is
#  written next to the KB, so the mounted KB's parent folder must be writable by uid 10001).
FROM python:3.11-slim

WORKDIR /app
# the service runs as this user, never as root: a flaw in a document parser or the server reaches no more
# than what it owns (its index and its load cache)
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin verirag
# PyPI's torch for Linux x86_64 is the CUDA build (several GB): the CPU wheel of the same version goes in
# first, so install.sh finds torch==2.13.0 satisfied and installs nothing more for it.
RUN python3.11 -m venv .venv \
 && .venv/bin/python -m pip install -q --upgrade pip \
 && .venv/bin/python -m pip install -q --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY . /app
# VERIRAG_EXTRAS empty: verirag and what it runs on, without the test extras (pytest, mypy, schemathesis,
# ray[serve]); the index folder (next to kb/) belongs to the service's user, which re-ingests into it
RUN VERIRAG_EXTRAS= ./install.sh \
 && mkdir -p /app/.verirag \
 && chown -R verirag:verirag /app/.verirag

USER verirag
ENV VERIRAG_CACHE_DIR=/home/verirag/.cache/verirag
RUN .venv/bin/verirag ingest kb          # the sample index is built at image build time, not on first request
EXPOSE 8000
# ready, not merely alive: /readyz is 503 while the model, index and rules load (start-period covers that),
# and whenever a component is down; /healthz only says the process answers
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s CMD \
  .venv/bin/python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4)"
CMD [".venv/bin/verirag", "serve", "--host", "0.0.0.0", "--port", "8000"]
