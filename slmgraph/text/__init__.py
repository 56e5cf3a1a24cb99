"""Text helpers every stage shares: sentences, JSON repair, Markdown as prose."""
