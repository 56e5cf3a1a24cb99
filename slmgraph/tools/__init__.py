"""Commands around an index: estimate, stats, export, picture, prompt-tune."""
