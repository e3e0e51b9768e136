# verirag on the CPU: `docker build -t verirag .` then `docker run -p 8000:8000 verirag`
# (the embedded sample KB, default rules and default model; mount your own with
#  -v /path/kb:/kb -v /path/rules:/rules and add `--kb /kb --rules /rules` to the command).
FROM python:3.11-slim

WORKDIR /app
# PyPI's torch for Linux x86_64 is the CUDA build (several GB): the CPU wheel of the same version goes in
# first, so install.sh finds torch==2.13.0 satisfied and installs nothing more for it.
RUN python3.11 -m venv .venv \
 && .venv/bin/python -m pip install -q --upgrade pip \
 && .venv/bin/python -m pip install -q --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
COPY . /app
RUN ./install.sh \
 && .venv/bin/verirag ingest kb          # the sample index is built at image build time, not on first request

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s CMD \
  .venv/bin/python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"
CMD [".venv/bin/verirag", "serve", "--host", "0.0.0.0", "--port", "8000"]
