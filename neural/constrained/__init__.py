"""Grammar-constrained decoding: a JSON-schema-driven logits processor whose output always parses."""
