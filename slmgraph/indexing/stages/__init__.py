"""The index stages in data-flow order: ingest, extraction, claims, resolution, graph, communities, topics, reports, embeddings."""
