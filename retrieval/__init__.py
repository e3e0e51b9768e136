"""verirag retrieval package."""
