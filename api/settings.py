"""Service settings: defaults < config file (TOML/YAML/JSON) < VERIRAG_* env vars < CLI flags."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from pipeline.defaults import MAX_SPECULATIVE_TOKENS


class SettingsError(ValueError):
    """The configuration (file, env vars or flags) is invalid; the message says which key and why."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VERIRAG_", extra="forbid", validate_default=True)

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    # knowledge base + its index; the index defaults to retrieval's <kb_dir>/../.verirag/index
    kb_dir: Path | None = None
    index_dir: Path | None = None
    rules_dir: Path | None = None
    model: str | None = None  # None = the default SmolLM2 GGUF; openai+http(s)://HOST:PORT/v1: a remote server
    # the remote generator (model openai+...): which model it serves and how patiently to talk to it
    served_model: str | None = Field(None, min_length=1)  # None: the one model the server lists
    remote_connect_timeout_s: float = Field(5.0, gt=0)
    remote_timeout_s: float = Field(60.0, gt=0)  # longest silence while a reply (or its next chunk) is due
    remote_retries: int = Field(3, ge=0, le=10)  # on connection errors and 429/502/503/504, backoff doubling
    remote_context_len: int | None = Field(None, ge=1)  # None: the server's listed max_model_len, else 2048
    device: str = "auto"
    dtype: str = "float32"
    kv_cache_bytes: int | None = Field(None, gt=0)
    max_num_seqs: int = Field(64, ge=1)
    # prompt-lookup speculative decoding: most tokens proposed per step, 0 = off. Greedy output is unchanged;
    # RAG answers that quote their sources decode ~2x faster on the 2-core CPU (bench/RESULTS.md)
    speculative_tokens: int = Field(0, ge=0, le=MAX_SPECULATIVE_TOKENS)
    # security
    api_key: SecretStr | None = None  # required on /ask and /v1/* when set
    admin_api_key: SecretStr | None = None  # admin endpoints are refused until this is set
    cors_origins: list[str] = []
    max_request_bytes: int = Field(256 * 1024, ge=1024)
    # a body that does not arrive in full within this many seconds (a stalled or trickled upload) is
    # answered 408 and its connection closed, instead of holding a worker and a socket forever
    body_timeout_s: float = Field(15.0, gt=0, le=30)
    # limits
    max_pending: int = Field(256, ge=1)  # unfinished engine requests before 503
    max_concurrent_asks: int = Field(64, ge=1)  # /ask worker threads
    max_tokens_limit: int = Field(2048, ge=1)
    retry_after_s: int = Field(1, ge=1)
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"
    # one line per request with its request id, route, status and latency: JSON (for log pipelines) or plain
    access_log: Literal["json", "plain", "off"] = "json"
    # `verirag serve --replicas N` (Ray Serve, api/ray_deploy.py): N copies of this app behind Ray's HTTP proxy
    replicas: int = Field(1, ge=1, le=1024)
    # None or "local": start a local Ray cluster ("local" with replicas 1 still runs on Ray); "auto" or
    # "ray://host:10001": join that cluster
    ray_address: str | None = None
    # autoscaling bounds: both set turns Ray's autoscaler on (replicas is then the starting count)
    min_replicas: int | None = Field(None, ge=0, le=1024)
    max_replicas: int | None = Field(None, ge=1, le=1024)
    target_ongoing_requests: float = Field(2.0, gt=0)  # the autoscaler aims at this many per replica
    # per-replica queue limit: requests one replica works on at once; more wait in Ray's router, and past
    # max_queued_requests (-1: no bound) the proxy answers 503
    max_ongoing_requests: int = Field(16, ge=1)
    max_queued_requests: int = Field(-1, ge=-1)
    replica_cpus: float = Field(1.0, gt=0)  # Ray CPUs per replica (also its torch threads: OMP_NUM_THREADS)
    replica_gpus: float = Field(0.0, ge=0)
    # how often each replica checks the index's CURRENT pointer and the rule generation another replica
    # published (api/replica_sync.py): the longest a replica serves the previous version after a reload
    replica_sync_s: float = Field(1.0, gt=0, le=60)
    # how often Ray checks each replica (its process alive, its engine loop running); a dead one is replaced
    replica_health_check_s: float = Field(10.0, gt=0, le=600)
    # replica starts that may fail before Ray gives up on a deployment none of whose replicas ever started
    # (Ray also caps them at 3 per replica); once one has started, Ray retries the others without end
    replica_start_attempts: int = Field(20, ge=1)

    @field_validator("model")
    @classmethod
    def _remote_url(cls, v: str | None) -> str | None:
        if v is not None and v.startswith("openai+"):
            from neural.remote_http import parse_remote_model

            parse_remote_model(v)  # RemoteConfigError is a ValueError: reported as this key's error
        return v

    @model_validator(mode="after")
    def _remote_keys_need_a_remote_model(self) -> Settings:
        if self.served_model is not None and not (self.model or "").startswith("openai+"):
            raise ValueError("served_model needs model = openai+http://HOST:PORT/v1 (a remote model)")
        return self

    def remote_config(self) -> Any:
        """The neural.remote.RemoteConfig the model names, or None for a local model."""
        if not (self.model or "").startswith("openai+"):
            return None
        from neural.remote_http import RemoteConfig

        return RemoteConfig.from_model(self.model or "", served_model=self.served_model,
                                       connect_timeout_s=self.remote_connect_timeout_s,
                                       read_timeout_s=self.remote_timeout_s, max_retries=self.remote_retries,
                                       context_len=self.remote_context_len)

    @field_validator("api_key", "admin_api_key")
    @classmethod
    def _non_empty_key(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and len(v.get_secret_value()) < 8:
            raise ValueError("API keys must be at least 8 characters")
        return v

    @model_validator(mode="after")
    def _replica_bounds(self) -> "Settings":
        lo, hi = self.min_replicas, self.max_replicas
        if (lo is None) != (hi is None):
            raise ValueError("min_replicas and max_replicas go together (both set: autoscaling on)")
        if lo is not None and hi is not None and not lo <= self.replicas <= hi:
            raise ValueError(f"replicas ({self.replicas}) must lie within min_replicas ({lo}) .. "
                             f"max_replicas ({hi})")
        return self

    @property
    def resolved_index_dir(self) -> Path | None:
        if self.index_dir is not None:
            return self.index_dir
        if self.kb_dir is not None:
            from retrieval.ingest import default_index_dir  # one rule for where an index lives

            return default_index_dir(self.kb_dir)
        return None

    def describe(self) -> str:
        """One `key = value` line per setting, secrets masked (printed at start-up)."""
        lines = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = "********"
            if name == "index_dir" and value is None and self.kb_dir is not None:
                value = f"{self.resolved_index_dir} (default)"
            lines.append(f"  {name} = {value}")
        return "\n".join(lines)


class _FileSource(PydanticBaseSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], values: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self.values = values

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)


def read_config_file(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise SettingsError(f"{path}: config file not found")
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            raise SettingsError(f"{path}: config file must be .toml, .yaml/.yml or .json")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError, json.JSONDecodeError) as exc:
        raise SettingsError(f"{path}: cannot parse config file: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("verirag"), dict):
        data = data["verirag"]  # allow a [verirag] table
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: config file must hold a mapping of settings")
    return data


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Build Settings; overrides (CLI flags) that are None are ignored. Raises SettingsError."""
    file_values = read_config_file(config_file) if config_file else {}

    class _Settings(Settings):
        @classmethod
        def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                       file_secret_settings):  # type: ignore[override]
            return init_settings, env_settings, _FileSource(settings_cls, file_values)

    try:
        made = _Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors()
        )
        raise SettingsError(f"invalid settings: {problems}") from None
    return Settings.model_construct(**made.model_dump())
