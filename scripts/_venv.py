"""Run a script under the project's virtual environment (.venv, made by scripts/setup), so
`scripts/NAME` works as the README writes it whichever python3 is first on PATH."""

import os
import sys
from pathlib import Path

VENV = Path(__file__).resolve().parent.parent / ".venv"


def ensure() -> None:
    """Re-run this script with .venv's python unless it is the one running (sys.prefix is
    the environment's directory; its python is a link to the system's, so compare that)."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        sys.exit(f"{sys.argv[0]}: no {python}; run scripts/setup first")
    os.execv(str(python), [str(python), sys.argv[0], *sys.argv[1:]])
