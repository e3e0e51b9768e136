"""verirag neural package."""
