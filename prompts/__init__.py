"""Prompt templates of slmgraph (installed as ``slmgraph.prompts``); see README.md here."""
