"""An answer read into claims in the rule vocabulary: one reader per way of saying a fact, run in the registry's order."""
