"""Settings, the slmgraph.toml reader and the prompts folder: what a run is told."""
