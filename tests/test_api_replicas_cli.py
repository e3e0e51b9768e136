"""`verirag serve --replicas` without a cluster: bad counts and bounds are clear CLI errors, the settings file's
autoscaling bounds and queue limits become Ray Serve's deployment options, and a missing Ray says how to get it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from api.cli import main
from api.ray_deploy import deployment_options
from api.settings import load_settings


@pytest.mark.parametrize("value, needle", [
    ("0", "must be between 1 and 1024, got 0"),
    ("-3", "must be between 1 and 1024, got -3"),
    ("2000", "must be between 1 and 1024, got 2000"),
    ("two", "must be a whole number of replicas (1..1024), got 'two'"),
    ("1.5", "must be a whole number of replicas (1..1024), got '1.5'"),
])
def test_bad_replica_counts_are_clear_cli_errors(value: str, needle: str, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["serve", "--replicas", value, "--print-settings"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "argument --replicas: " + needle in err and "Traceback" not in err


@pytest.mark.parametrize("config, needle", [
    ("min_replicas = 1\n", "min_replicas and max_replicas go together"),
    ("min_replicas = 1\nmax_replicas = 3\nreplicas = 5\n",
     "replicas (5) must lie within min_replicas (1) .. max_replicas (3)"),
    ("max_ongoing_requests = 0\n", "max_ongoing_requests: Input should be greater than or equal to 1"),
    ("replica_cpus = -1\n", "replica_cpus: Input should be greater than 0"),
])
def test_bad_replica_settings_are_clear_errors(tmp_path: Path, config: str, needle: str, capsys) -> None:
    cfg = tmp_path / "verirag.toml"
    cfg.write_text(config, encoding="utf-8")
    assert main(["serve", "--config", str(cfg), "--print-settings"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("verirag serve: error: invalid settings: ") and needle in err


def test_settings_file_gives_autoscaling_bounds_and_queue_limits(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "verirag.toml"
    cfg.write_text("min_replicas = 1\nmax_replicas = 4\nmax_ongoing_requests = 8\nmax_queued_requests = 100\n"
                   "target_ongoing_requests = 3\nreplica_cpus = 2\nreplica_gpus = 1\n", encoding="utf-8")
    assert main(["serve", "--config", str(cfg), "--replicas", "2", "--print-settings"]) == 0
    assert "  replicas = 2\n" in capsys.readouterr().err
    settings = load_settings(cfg, replicas=2)
    assert deployment_options(settings) == {
        "max_ongoing_requests": 8, "max_queued_requests": 100, "health_check_period_s": 10.0,
        "max_constructor_retry_count": 20,
        "ray_actor_options": {"num_cpus": 2.0, "num_gpus": 1.0},
        "autoscaling_config": {"min_replicas": 1, "max_replicas": 4, "initial_replicas": 2,
                               "target_ongoing_requests": 3.0}}
    fixed = deployment_options(load_settings(None, replicas=3))
    assert fixed["num_replicas"] == 3 and "autoscaling_config" not in fixed
    assert fixed["max_ongoing_requests"] == 16 and fixed["max_queued_requests"] == -1


def test_replicas_without_ray_installed_say_how_to_install_it(tmp_path: Path, monkeypatch, capsys) -> None:
    from api.commands.serve_replicas import run_replicas

    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without the [ray] extra looks like
    assert run_replicas(load_settings(None, replicas=2)) == 2
    err = capsys.readouterr().err
    assert "replicas need Ray Serve, which is not installed" in err and "pip install 'verirag[ray]'" in err


# the shape of the message Ray 2.60 gave `verirag serve --replicas 1 --model /nonexistent/model.gguf`
RAY_MESSAGE = """The deployment failed to start 3 times in a row. This may be due to a problem with its constructor \
or initial health check failing. See controller logs for details. Error:
\x1b[36mray::ServeReplica:verirag:VerifiedRAG.initialize_and_get_metadata()\x1b[39m (pid=10698, ip=192.0.2.2)
  File "/x/ray/serve/_private/replica.py", line 1928, in initialize
    raise RuntimeError(traceback.format_exc()) from None
RuntimeError: Traceback (most recent call last):
  File "/x/api/state.py", line 106, in build_components
    engine = Engine(EngineConfig(model=settings.model, device=settings.device, dtype=settings.dtype,
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/x/neural/loader/__init__.py", line 38, in load_model
    raise ModelLoadError(f"model path does not exist: {p}")
neural.errors.ModelLoadError: model path does not exist: /nonexistent/model.gguf
"""


def test_rays_failure_message_is_cut_to_the_exception() -> None:
    from api.ray_deploy import summarize

    assert summarize(RAY_MESSAGE) == (
        "The deployment failed to start 3 times in a row. This may be due to a problem with its constructor or "
        "initial health check failing. See controller logs for details. Error: "
        "neural.errors.ModelLoadError: model path does not exist: /nonexistent/model.gguf")
    plain = "A replica's health check failed. This deployment will be UNHEALTHY until the replica recovers."
    assert summarize(plain) == plain and summarize("") == ""
