"""The engine's error hierarchy: every user-facing failure is an EngineError with a clear message."""
from __future__ import annotations


class EngineError(Exception):
    """Base class of every error the decode engine raises on purpose."""


class ModelLoadError(EngineError):
    """The model file/folder is missing, unreadable, corrupt or incomplete."""


class UnsupportedModelError(EngineError):
    """The model exists but its architecture or features are not supported."""


class PromptTooLongError(EngineError, ValueError):
    """A prompt (plus at least one generated token) does not fit in max_model_len."""


class InvalidSamplingError(EngineError, ValueError):
    """A SamplingParams field has an invalid value."""


class InvalidRequestError(EngineError, ValueError):
    """A request is malformed (empty prompt, duplicate id, unknown token ids...)."""


class RemoteConfigError(EngineError, ValueError):
    """A remote generator is named wrongly: a malformed ``openai+http(s)://`` URL or bad client options."""


class RemoteUnavailableError(EngineError):
    """The remote OpenAI-compatible server did not answer usefully (down, stalled, overloaded after retries,
    refused the key); the message names its URL. The API answers it 503."""


class RemoteModelNotServedError(RemoteUnavailableError):
    """The remote server answers but does not list the served model asked for (a configuration error)."""


class RemoteRequestError(EngineError, ValueError):
    """The remote server refused the request itself (HTTP 400/413/422: a prompt too long for its context...)."""
