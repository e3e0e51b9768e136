"""`verirag serve`: serve the HTTP API with uvicorn at once, loading engine, index and rules meanwhile (or, with
--replicas N, as N Ray Serve replicas: api/commands/serve_replicas.py)."""
from __future__ import annotations

import argparse
import logging
import sys

from api.commands.models import MODEL_HELP
from api.commands.remote_args import add_remote_args


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="serve the REST API (/ask, /v1/chat/completions, admin, metrics)")
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 8000)")
    p.add_argument("--kb", metavar="DIR", default=None, help="knowledge base folder (default: the embedded kb/)")
    p.add_argument("--index", metavar="DIR", default=None, help="index folder (default: next to the KB)")
    p.add_argument("--rules", metavar="DIR", default=None, help="rule folder (default: the embedded rules/)")
    p.add_argument("--model", metavar="NAME|PATH", default=None, help=MODEL_HELP)
    p.add_argument("--speculative-tokens", type=int, metavar="K", default=None,
                   help="prompt-lookup speculative decoding, at most K proposed tokens per step (default 0: off)")
    p.add_argument("--config", metavar="FILE", default=None,
                   help="settings file (.toml/.yaml/.json); VERIRAG_* env vars and flags override it")
    p.add_argument("--access-log", choices=["json", "plain", "off"], default=None,
                   help="one line per request (request id, route, status, latency): json (default), plain or off")
    p.add_argument("--replicas", type=replica_count, metavar="N", default=None,
                   help="run N replicas of the app behind Ray Serve's HTTP proxy (needs verirag[ray]; "
                        "autoscaling bounds and queue limits come from the settings file)")
    p.add_argument("--ray-address", metavar="ADDR", default=None,
                   help="join this Ray cluster ('auto', ray://host:10001) instead of starting a local one; "
                        "'local' starts one even for a single replica")
    p.add_argument("--print-settings", action="store_true", help="print the effective settings and exit")
    add_remote_args(p)
    p.set_defaults(func=handler)


def replica_count(text: str) -> int:
    """argparse type for --replicas: a whole number from 1 to 1024, said plainly otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of replicas (1..1024), got {text!r}") from None
    if not 1 <= n <= 1024:
        raise argparse.ArgumentTypeError(f"must be between 1 and 1024, got {n}")
    return n


def handler(args: argparse.Namespace) -> int:
    from api.settings import SettingsError, load_settings

    try:
        settings = load_settings(args.config, host=args.host, port=args.port, kb_dir=args.kb,
                                 index_dir=args.index, rules_dir=args.rules, model=args.model,
                                 speculative_tokens=args.speculative_tokens, access_log=args.access_log,
                                 served_model=args.served_model, remote_timeout_s=args.remote_timeout,
                                 remote_connect_timeout_s=args.remote_connect_timeout,
                                 remote_retries=args.remote_retries, remote_context_len=args.remote_context_len,
                                 replicas=args.replicas, ray_address=args.ray_address)
    except SettingsError as exc:
        print(f"verirag serve: error: {exc}", file=sys.stderr)
        return 2
    if settings.kb_dir is None or settings.rules_dir is None:  # the embedded default domain
        from pipeline import DEFAULT_KB_DIR, DEFAULT_RULES_DIR

        settings = settings.model_copy(update={"kb_dir": settings.kb_dir or DEFAULT_KB_DIR,
                                               "rules_dir": settings.rules_dir or DEFAULT_RULES_DIR})
    if args.print_settings:
        print("verirag serve settings:\n" + settings.describe(), file=sys.stderr, flush=True)
        return 0
    for path, what in ((settings.kb_dir, "knowledge base"), (settings.rules_dir, "rules")):
        if path is None or not path.exists():
            print(f"verirag serve: error: {what} folder not found: {path}", file=sys.stderr)
            return 2
    if settings.replicas > 1 or settings.min_replicas is not None or settings.ray_address is not None:
        from api.commands.serve_replicas import run_replicas

        return run_replicas(settings)
    from api.log_setup import configure_logging

    configure_logging(settings)
    logging.getLogger("verirag.api").info("settings:\n%s", settings.describe())
    import uvicorn

    from api.app import create_app

    # the port is bound at once and the model, index and rules load in a thread meanwhile: /healthz answers,
    # /readyz says which stage is loading, /ask is 503 + Retry-After until they are in (a model took ~75 s)
    server: uvicorn.Server | None = None

    def stop(_exc: BaseException) -> None:
        if server is not None:
            server.should_exit = True

    app = create_app(settings, build_missing=True, load_in_background=True, on_load_failure=stop)
    # uvicorn's own access log would say "200 OK" for a request the client aborted: ours says what happened
    # log_config=None: uvicorn keeps its hands off logging, so its lines go through our (JSON) root handler
    server = uvicorn.Server(uvicorn.Config(app, host=settings.host, port=settings.port, access_log=False,
                                           log_level=settings.log_level.lower(), log_config=None))
    server.run()
    error = app.state.svc.load_error
    if error is not None:  # component errors (RuleError, RetrievalError, EngineError) carry clear text
        print(f"verirag serve: error: {error.split(': ', 1)[-1]}", file=sys.stderr)
        return 1
    return 0
