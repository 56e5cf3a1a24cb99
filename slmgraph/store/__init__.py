"""The DuckDB file that holds the whole index: schema, migrations and row types."""
