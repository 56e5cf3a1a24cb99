"""Names of things: their forms, titles, suffixes and kinds."""
