"""Errors raised by the retrieval package: one base class, specific subclasses per failure kind."""
from __future__ import annotations


class RetrievalError(Exception):
    """Base class of every error the retrieval package raises on purpose."""


class DocumentError(RetrievalError):
    """A knowledge-base file cannot be loaded (binary, undecodable, too large, bad front matter...)."""


class PathRefusedError(DocumentError):
    """A path is a symlink or resolves outside the knowledge-base root."""


class IndexNotFoundError(RetrievalError):
    """No index has been written at the given directory yet."""


class IndexMismatchError(RetrievalError):
    """The index on disk was built with another embedder, dimension, chunking or format version."""


class IndexCorruptError(RetrievalError):
    """The index files disagree with each other (e.g. vector count != chunk count)."""


class InvalidQueryError(RetrievalError, ValueError):
    """Bad arguments to search (empty query, top_k <= 0, unknown filter type...)."""


class VectorStoreUnavailableError(RetrievalError):
    """The vector database an index lives in cannot be reached or answered with an error (down, slow
    past the timeout, collection missing). Names the backend and where it was looked for."""

    def __init__(self, backend: str, where: str, reason: str):
        super().__init__(f"vector database {backend} at {where}: {reason}")
        self.backend, self.where, self.reason = backend, where, reason
