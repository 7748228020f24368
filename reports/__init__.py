"""Renderings of scan results: the terminal table and machine-readable JSON."""
