"""verirag retrieval: KB loading, chunking, embeddings, FAISS + BM25 hybrid search, persisted index."""
from .chunking import ChunkingConfig
from .documents import LoadLimits
from .embedder import HashingEmbedder, TransformerEmbedder, get_embedder
from .errors import (DocumentError, IndexCorruptError, IndexMismatchError, IndexNotFoundError,
                     InvalidQueryError, PathRefusedError, RetrievalError)
from .ingest import default_index_dir, ingest
from .records import IngestReport, Passage
from .retriever import Retriever
from .status import index_status
from .vector_index import VectorIndexConfig

__all__ = ["ChunkingConfig", "DocumentError", "HashingEmbedder", "IndexCorruptError", "IndexMismatchError",
           "IndexNotFoundError", "IngestReport", "InvalidQueryError", "LoadLimits", "Passage",
           "PathRefusedError", "RetrievalError", "Retriever", "TransformerEmbedder", "VectorIndexConfig",
           "default_index_dir", "get_embedder", "index_status", "ingest"]
