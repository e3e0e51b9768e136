"""The remote-generator flags (--served-model, timeouts, retries) every command that takes --model shares."""
from __future__ import annotations

import argparse
from typing import Any

_FLAGS = ("served_model", "remote_timeout", "remote_connect_timeout", "remote_retries", "remote_context_len")


def add_remote_args(p: argparse.ArgumentParser) -> None:
    """Unset flags stay None: neural.remote_http.RemoteConfig's defaults (or, for serve, the settings) apply."""
    g = p.add_argument_group("remote generator (--model openai+http://HOST:PORT/v1 or openai+https://...; "
                             "the API key, if the server wants one, from $VERIRAG_REMOTE_API_KEY)")
    g.add_argument("--served-model", metavar="NAME", default=None,
                   help="the model's name on that server (default: the only model it lists)")
    g.add_argument("--remote-timeout", type=float, metavar="S", default=None,
                   help="longest wait for the reply or its next streamed chunk, in seconds (default 60)")
    g.add_argument("--remote-connect-timeout", type=float, metavar="S", default=None,
                   help="longest wait to connect, in seconds (default 5)")
    g.add_argument("--remote-retries", type=int, metavar="N", default=None,
                   help="retries on connection errors and HTTP 429/502/503/504, backoff 0.5 s doubling (default 3)")
    g.add_argument("--remote-context-len", type=int, metavar="TOKENS", default=None,
                   help="the served model's context length (default: what the server lists, else 2048)")


def remote_config(args: argparse.Namespace) -> Any:
    """The neural.remote RemoteConfig that --model names, or None for a local model. A malformed URL, a
    bad option, or remote flags without a remote --model: RemoteConfigError (a ValueError) saying which."""
    from neural.errors import RemoteConfigError
    from neural.remote_http import RemoteConfig, is_remote_model

    if not is_remote_model(getattr(args, "model", None)):
        given = [f"--{name.replace('_', '-')}" for name in _FLAGS if getattr(args, name, None) is not None]
        if given:
            raise RemoteConfigError(f"{', '.join(given)} need(s) --model openai+http://HOST:PORT/v1 (a remote model)")
        return None
    return RemoteConfig.from_model(args.model, served_model=args.served_model,
                                   read_timeout_s=args.remote_timeout, connect_timeout_s=args.remote_connect_timeout,
                                   max_retries=args.remote_retries, context_len=args.remote_context_len)


def open_remote(args: argparse.Namespace) -> Any:
    """A connected neural.remote.RemoteGenerator for a remote --model (its model checked), else None."""
    config = remote_config(args)
    if config is None:
        return None
    from neural.remote import RemoteGenerator

    return RemoteGenerator.connect(config)
