"""verirag symbolic package."""
