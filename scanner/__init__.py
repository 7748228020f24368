"""The scanner: collects facts from a system root (read-only) and evaluates rules on them."""
