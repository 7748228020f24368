"""The standalone collector script, for hosts without sascheck (sascheck collect --script)."""

from pathlib import Path

SCRIPT = (Path(__file__).resolve().parent / "collect.sh").read_text(encoding="utf-8")
