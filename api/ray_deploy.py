"""Ray Serve replicas: start or join a Ray cluster, deploy N VerifiedRAGReplicas behind Ray's HTTP proxy,
and report the deployment's state (replicas running, failures Ray retries) until the app is stopped."""
from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api import replica_loss
from api.replica import DEFAULT_COMPONENTS
from api.settings import Settings

APP_NAME = "verirag"
DEPLOYMENT = "VerifiedRAG"
PROXY_CALLBACK_ENV = "RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"


class RayUnavailableError(RuntimeError):
    """ray[serve] is not installed, or the cluster cannot be started or reached."""


class DeployFailedError(RuntimeError):
    """Ray gave up on the deployment: no replica ever started (the message is Ray's, with the cause)."""


def require_ray() -> None:
    try:
        import ray  # noqa: F401
        from ray import serve  # noqa: F401
    except ImportError as exc:
        raise RayUnavailableError(f"replicas need Ray Serve, which is not installed ({exc.name}): "
                                  "pip install 'verirag[ray]'") from None


def deployment_options(settings: Settings) -> dict[str, Any]:
    """serve.deployment's options from the settings: replica count or autoscaling bounds, queue limits,
    resources per replica."""
    opts: dict[str, Any] = {
        "max_ongoing_requests": settings.max_ongoing_requests,
        "max_queued_requests": settings.max_queued_requests,
        "ray_actor_options": {"num_cpus": settings.replica_cpus, "num_gpus": settings.replica_gpus},
        "health_check_period_s": settings.replica_health_check_s,
        "max_constructor_retry_count": settings.replica_start_attempts,
    }
    if settings.min_replicas is not None:
        opts["autoscaling_config"] = {"min_replicas": settings.min_replicas, "max_replicas": settings.max_replicas,
                                      "initial_replicas": settings.replicas,
                                      "target_ongoing_requests": settings.target_ongoing_requests}
    else:
        opts["num_replicas"] = settings.replicas
    return opts


def build_application(settings: Settings, components: str = DEFAULT_COMPONENTS) -> Any:
    from ray import serve

    from api.replica import VerifiedRAGReplica

    deployment = serve.deployment(name=DEPLOYMENT, **deployment_options(settings))(
        serve.ingress()(VerifiedRAGReplica))
    return deployment.bind(settings, components)


def connect(settings: Settings, *, num_cpus: int | None = None, pythonpath: list[str] | None = None) -> bool:
    """ray.init: join settings.ray_address, or start a local cluster when it is None or "local" (then True).

    A local cluster's processes inherit this process's environment when they start: they get this very
    checkout of verirag on their PYTHONPATH (plus ``pythonpath``), and Ray's proxy gets
    api.replica_loss's middleware. A cluster joined by address was configured when it was started."""
    import ray

    if ray.is_initialized():
        return False
    no_auto_init()
    local = settings.ray_address in (None, "local")
    saved = dict(os.environ)
    if local:
        here = str(Path(__file__).resolve().parent.parent)
        paths = [here, *(pythonpath or []), *filter(None, [os.environ.get("PYTHONPATH")])]
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)
        os.environ.setdefault(PROXY_CALLBACK_ENV, replica_loss.IMPORT_PATH)
    try:
        # "local": a fresh cluster even when `ray start` left one running on this machine
        ray.init(address="local" if local else settings.ray_address, num_cpus=num_cpus if local else None,
                 include_dashboard=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = settings.ray_address or "a local cluster"
        raise RayUnavailableError(f"cannot start or reach Ray ({where}): {exc}") from None
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return local


def no_auto_init() -> None:
    """Stop Ray's own call wrappers from starting a cluster when this process is not connected (Serve's calls
    start one whatever this says: shutdown() therefore ends every thread that makes them first)."""
    try:
        from ray._private import auto_init_hook  # Ray reads RAY_ENABLE_AUTO_CONNECT once, at import
    except ImportError:  # a later Ray without this private module: shutdown()'s joins still hold
        return
    auto_init_hook.enable_auto_connect = False


# serve.run threads deploy() started: shutdown() joins them before it disconnects, because a Serve call made
# after ray.shutdown() starts a stray local cluster, whose loss 60 s later makes Ray's GCS client end this
# whole process with status 1
_runners: list[threading.Thread] = []


@dataclass
class DeploymentState:
    app_status: str
    status: str
    running: int
    total: int  # replicas in any state: running, starting, stopping
    message: str


def summarize(message: str) -> str:
    """Ray's status message with a replica's traceback cut to its last line, the exception a person acts on
    (``... Error: ModelLoadError: model path does not exist: ...``); the whole traceback stays in Ray's logs."""
    head, sep, rest = message.partition("Error:")
    if not sep or "Traceback" not in rest:
        return message.strip()
    lines = [line.strip() for line in rest.splitlines() if line.strip().strip("^~ ")]
    return f"{head.strip()} Error: {lines[-1]}"


def deployment_state(app_name: str = APP_NAME) -> DeploymentState | None:
    from ray import serve

    app = serve.status().applications.get(app_name)
    if app is None or DEPLOYMENT not in app.deployments:
        return None
    dep = app.deployments[DEPLOYMENT]
    states = {getattr(k, "value", k): n for k, n in dep.replica_states.items()}
    return DeploymentState(str(getattr(app.status, "value", app.status)),
                           str(getattr(dep.status, "value", dep.status)), states.get("RUNNING", 0),
                           sum(states.values()), summarize(dep.message or app.message or ""))


def deploy(settings: Settings, components: str = DEFAULT_COMPONENTS, *, timeout_s: float = 1800,
           report: Callable[[DeploymentState], None] | None = None, app_name: str = APP_NAME,
           route_prefix: str = "/") -> DeploymentState:
    """Start Serve's proxy on settings.host:port and deploy; return once at least one replica answers.

    serve.run waits for every replica, so it runs in a thread while this polls serve.status(): a replica
    that cannot load (Ray retries it and says why) leaves the healthy ones serving. Raises
    DeployFailedError when Ray gives up (no replica ever started)."""
    from ray import serve

    serve.start(http_options={"host": settings.host, "port": settings.port})
    failure: list[BaseException] = []

    def run() -> None:
        try:
            # Ray's per-request log lines are off: the app writes its own access log (settings.access_log)
            serve.run(build_application(settings, components), name=app_name, route_prefix=route_prefix,
                      logging_config={"log_level": settings.log_level.upper(), "enable_access_log": False})
        except BaseException as exc:  # noqa: BLE001 - reported by the polling loop
            failure.append(exc)

    runner = threading.Thread(target=run, name=f"verirag-serve-run-{app_name}", daemon=True)
    _runners.append(runner)
    runner.start()
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        state = deployment_state(app_name)
        if state is not None:
            if report is not None and state != last:
                report(state)
            last = state
            if state.app_status == "DEPLOY_FAILED" or state.status == "DEPLOY_FAILED":
                runner.join(timeout=10)  # serve.run sees the same failure within a poll; no thread outlives it
                raise DeployFailedError(state.message or "the deployment failed")
            if state.running >= 1:
                return state
        if failure:
            raise DeployFailedError(summarize(str(failure[0])))
        time.sleep(0.5)
    raise DeployFailedError(f"no replica was running after {timeout_s:.0f} s: {last.message if last else ''}")


def watch(report: Callable[[DeploymentState], None], stop: threading.Event, period_s: float = 2.0) -> None:
    """Report each change of the deployment's state (a replica dying, being restarted, failing) until stop."""
    last = None
    while not stop.wait(period_s):
        state = deployment_state()
        if state is not None and state != last:
            report(state)
            last = state


def shutdown(started_local: bool) -> None:
    """Remove the app; a local cluster this process started goes with it."""
    import ray
    from ray import serve

    if started_local:
        serve.shutdown()  # the controller goes: a serve.run still waiting on it fails at its next poll
    else:
        serve.delete(APP_NAME)
    while _runners:
        _runners.pop().join(timeout=30)
    if started_local:
        ray.shutdown()
