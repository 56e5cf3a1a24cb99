"""Answering questions: the engines (global, local, basic, DRIFT, lazy) and what they share."""
