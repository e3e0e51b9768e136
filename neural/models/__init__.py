"""Model architectures the engine runs (paged-KV forward passes)."""
