"""slmgraph: local-first, offline GraphRAG for small language models on a CPU.

Method: Edge et al. 2024, "From Local to Global: A Graph RAG Approach to
Query-Focused Summarization" (arXiv 2404.16130). See README.md.
"""

__version__ = "0.1.0"
