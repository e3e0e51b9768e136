"""The answer loop: the Answerer, its configuration, its events and the result it returns."""
