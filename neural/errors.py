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
