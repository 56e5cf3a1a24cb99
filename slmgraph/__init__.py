"""slmgraph: local-first, offline GraphRAG for small language models on a CPU.

Method: Edge et al. 2024, "From Local to Global: A Graph RAG Approach to
Query-Focused Summarization" (arXiv 2404.16130). See README.md.
"""

__version__ = "0.1.0"

#: The Python API (slmgraph/api.py), imported on first use so that ``import slmgraph`` stays light.
__all__ = ["index", "open", "Index", "Answer", "settings_for", "UserError"]


def __getattr__(name: str):
    if name in ("index", "open", "Index", "Answer", "settings_for"):
        from slmgraph import api

        return getattr(api, name)
    if name == "UserError":
        from slmgraph.errors import UserError

        return UserError
    raise AttributeError(f"module 'slmgraph' has no attribute {name!r}")
