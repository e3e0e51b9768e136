"""HTTP to an OpenAI-compatible server: the ``openai+http(s)://`` model spec, timeouts, bounded retries with
exponential backoff, and each failure turned into an error that names the server's URL."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import httpx

from neural.errors import (RemoteConfigError, RemoteModelNotServedError, RemoteRequestError,
                           RemoteUnavailableError)

PREFIX = "openai+"
API_KEY_ENV = "VERIRAG_REMOTE_API_KEY"
# Worth another try: the server is overloaded (429), restarting or behind a proxy whose upstream is (502,
# 503, 504). Any other status is an answer, and asking again would get the same one.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# Failures before the server has read the request: resending cannot generate twice.
_CONNECT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError)


def is_remote_model(spec: object) -> bool:
    """A --model value naming an OpenAI-compatible server (``openai+http://HOST:PORT/v1``)."""
    return isinstance(spec, str) and spec.startswith(PREFIX)


def parse_remote_model(spec: str) -> str:
    """The server's base URL (``http(s)://host[:port]/path``, no trailing slash) from an ``openai+`` spec;
    RemoteConfigError saying what is wrong otherwise."""
    form = "openai+http://HOST:PORT/v1 or openai+https://HOST/v1"
    if not is_remote_model(spec):
        raise RemoteConfigError(f"--model {spec!r} is not a remote model: write {form}")
    raw = spec[len(PREFIX):]
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, TypeError) as exc:
        raise RemoteConfigError(f"--model {spec!r}: malformed URL ({exc}); write {form}") from None
    if url.scheme not in ("http", "https"):
        raise RemoteConfigError(f"--model {spec!r}: the scheme must be http or https, not {url.scheme or 'none'!r}; "
                                f"write {form}")
    if not url.host:
        raise RemoteConfigError(f"--model {spec!r}: the URL names no host; write {form}")
    if url.port is not None and not 0 < url.port < 65536:
        raise RemoteConfigError(f"--model {spec!r}: port {url.port} is out of range (1..65535)")
    if url.query or url.fragment or url.userinfo:
        raise RemoteConfigError(f"--model {spec!r}: give the base URL only (no query, fragment or credentials: the "
                                f"API key comes from ${API_KEY_ENV})")
    return str(url).rstrip("/")


@dataclass(frozen=True)
class RemoteConfig:
    """Where the remote model is and how patiently to talk to it."""
    base_url: str                     # http(s)://host:port/v1, as parse_remote_model returns it
    served_model: str | None = None   # None: the one model the server lists
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 60.0      # longest silence while waiting for the reply or its next streamed chunk
    max_retries: int = 3              # further attempts after a connection error or 429/502/503/504
    backoff_s: float = 0.5            # first wait; doubled each retry, at most max_backoff_s
    max_backoff_s: float = 8.0
    context_len: int | None = None    # None: the server's listed max_model_len (vLLM lists it), else 2048
    # chat() reads the reply as an SSE stream too (False: one JSON body, for a server that cannot stream)
    stream_replies: bool = True
    api_key_env: str = API_KEY_ENV

    def __post_init__(self) -> None:
        for name in ("connect_timeout_s", "read_timeout_s", "backoff_s", "max_backoff_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise RemoteConfigError(f"remote generator: {name} must be a positive number of seconds; got {v!r}")
        for name, low in (("max_retries", 0), ("context_len", 1)):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise RemoteConfigError(f"remote generator: {name} must be an integer >= {low}; got {v!r}")
        if self.served_model is not None and not self.served_model.strip():
            raise RemoteConfigError("remote generator: --served-model must not be empty")

    @classmethod
    def from_model(cls, spec: str, **options: Any) -> RemoteConfig:
        return cls(parse_remote_model(spec), **{k: v for k, v in options.items() if v is not None})

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based): the server's Retry-After when it sends
        one, else backoff_s * 2**retry; never more than max_backoff_s."""
        wait = retry_after if retry_after is not None else self.backoff_s * 2 ** retry
        return min(self.max_backoff_s, max(0.0, wait))


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None  # absent, or an HTTP date: exponential backoff instead


def error_message(response: httpx.Response) -> str:
    """The server's own words for an error reply (OpenAI's {"error": {"message"}}, FastAPI's detail, text)."""
    try:
        response.read()   # a streamed reply's body is not read yet
    except httpx.HTTPError:
        return ""
    try:
        data = response.json()
    except ValueError:
        return response.text[:300].strip()
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message") or err.get("detail") or err)[:300]
        return str(data.get("message") or data.get("detail") or err)[:300]
    return str(data)[:300]


def raise_for_status(response: httpx.Response, where: str) -> None:
    """Nothing for a 2xx reply; else (the reply closed) the error class the caller's layer maps (400 to the
    user's request, 503 to an unusable backend), with the server's message and ``where`` (the URL) in it."""
    status = response.status_code
    if status < 300:
        return
    said = error_message(response)
    response.close()
    detail = f"HTTP {status}" + (f": {said}" if said else "")
    if status in (400, 413, 422):
        raise RemoteRequestError(f"remote generator {where} refused the request ({detail})")
    if status in (401, 403):
        raise RemoteUnavailableError(f"remote generator {where} refused the API key ({detail}); verirag sends "
                                     f"${API_KEY_ENV} as a Bearer token")
    if status == 404 and "model" in said.lower():
        raise RemoteModelNotServedError(f"remote generator {where} does not serve the model asked for ({detail})")
    if status == 404:
        raise RemoteUnavailableError(f"remote generator {where} has no such route ({detail}): is the URL the "
                                     "server's OpenAI base, usually ending in /v1?")
    raise RemoteUnavailableError(f"remote generator {where} failed ({detail})")


class RemoteHTTP:
    """One pooled httpx client for a server; ``send`` retries what is safe to retry and gives up clearly."""

    def __init__(self, config: RemoteConfig, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config, self.sleep = config, sleep
        headers = {"Accept": "application/json"}
        key = os.environ.get(config.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        timeout = httpx.Timeout(connect=config.connect_timeout_s, read=config.read_timeout_s,
                                write=config.read_timeout_s, pool=config.connect_timeout_s)
        # the environment's proxy and CA settings (HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE) apply, as for any client
        self.client = httpx.Client(headers=headers, timeout=timeout, transport=transport)
        self.attempts = 0   # requests sent, retries included (for tests and logs)

    def url(self, path: str) -> str:
        return f"{self.config.base_url}/{path}"

    def send(self, method: str, path: str, *, json: Any = None, stream: bool = False) -> httpx.Response:
        """The server's reply (any status but a retryable one; a streamed body still unread); retries
        connection errors and 429/502/503/504 at most max_retries times; RemoteUnavailableError after that,
        or at once on a read timeout (a stalled server: asking again would double the wait)."""
        url = self.url(path)
        cfg = self.config
        failure = ""
        for retry in range(cfg.max_retries + 1):
            self.attempts += 1
            retry_after = None
            try:
                response = self.client.send(self.client.build_request(method, url, json=json), stream=stream)
            except _CONNECT_ERRORS as exc:
                failure = f"cannot connect ({type(exc).__name__}: {exc or 'no detail'})"
            except httpx.TimeoutException:
                raise RemoteUnavailableError(f"remote generator {url} did not answer within {cfg.read_timeout_s:g} s "
                                             "(read timeout; --remote-timeout sets it)") from None
            except httpx.HTTPError as exc:
                raise RemoteUnavailableError(f"remote generator {url}: {type(exc).__name__}: {exc}") from None
            else:
                if response.status_code not in RETRY_STATUSES:
                    return response
                failure = f"HTTP {response.status_code}" + (f" ({m})" if (m := error_message(response)) else "")
                retry_after = _retry_after(response)
                response.close()
            if retry < cfg.max_retries:
                self.sleep(cfg.delay(retry, retry_after))
        raise RemoteUnavailableError(f"remote generator {url} is unavailable: {failure}, "
                                     f"{cfg.max_retries + 1} attempt(s)")

    def close(self) -> None:
        self.client.close()
