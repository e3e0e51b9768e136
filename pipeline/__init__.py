"""verirag pipeline package."""
