"""The query engines, one module each."""
