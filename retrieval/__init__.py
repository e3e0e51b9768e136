"""verirag retrieval: KB loading, chunking, embeddings, FAISS + BM25 hybrid search, persisted index."""
from .backend import BackendConfig
from .chunking import ChunkingConfig
from .documents import LoadLimits
from .embedder import HashingEmbedder, TransformerEmbedder, get_embedder
from .errors import (DocumentError, IndexCorruptError, IndexMismatchError, IndexNotFoundError,
                     InvalidQueryError, PathRefusedError, RetrievalError,
                     VectorStoreUnavailableError)
from .ingest import default_index_dir, ingest
from .records import IngestReport, Passage
from .retriever import Retriever
from .status import index_status
from .vector_index import VectorIndexConfig

__all__ = ["BackendConfig", "ChunkingConfig", "DocumentError", "HashingEmbedder", "IndexCorruptError", "IndexMismatchError",
           "IndexNotFoundError", "IngestReport", "InvalidQueryError", "LoadLimits", "Passage",
           "PathRefusedError", "RetrievalError", "Retriever", "TransformerEmbedder", "VectorIndexConfig", "VectorStoreUnavailableError",
           "default_index_dir", "get_embedder", "index_status", "ingest"]
