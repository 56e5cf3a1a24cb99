"""Measurement: the extraction gold scorer, bench and calibrate."""
