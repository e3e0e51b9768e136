"""verirag api package."""
