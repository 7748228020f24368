"""tuned's own profile loader (Debian's tuned package, 2.20), run against an image's profile
directories: a profile whose include is missing fails here exactly as tuned refuses it.

scripts/setup --test unpacks the package into .venv/tuned-deb (nothing installed system-wide);
the loader runs under the system /usr/bin/python3, as the package's own programs do.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / ".venv" / "tuned-deb" / "usr" / "lib" / "python3" / "dist-packages"
PYTHON = "/usr/bin/python3"

# tuned.profiles.loader.Loader with a Locator over the image's directories, in tuned's order
# (consts.LOAD_DIRECTORIES before 2.24: /usr/lib/tuned then /etc/tuned, the later winning).
_PROGRAM = r"""
import json, sys
from tuned.profiles.exceptions import InvalidProfileException
from tuned.profiles.factory import Factory
from tuned.profiles.loader import Loader
from tuned.profiles.locator import Locator
from tuned.profiles.merger import Merger
from tuned.profiles.variables import Variables
directories, name = json.loads(sys.argv[1]), sys.argv[2]
loader = Loader(Locator(directories), Factory(), Merger(), None, Variables())
try:
    profile = loader.load(name)
except InvalidProfileException as exc:
    print(json.dumps({"error": str(exc)}))
else:
    print(json.dumps({"units": {unit: dict(value.options) for unit, value in profile.units.items()},
                      "enabled": {unit: value.enabled for unit, value in profile.units.items()},
                      "types": {unit: value.type for unit, value in profile.units.items()}}))
"""


def available() -> bool:
    return (PACKAGE / "tuned" / "profiles" / "loader.py").is_file() and Path(PYTHON).exists()


def require() -> None:
    if available():
        return
    if os.environ.get("CI"):
        pytest.fail("tuned's loader is missing: scripts/setup --test unpacks Debian's tuned")
    pytest.skip("tuned's loader is missing (scripts/setup --test unpacks Debian's tuned)")


def load(root: Path, name: str) -> dict:
    """{'units': {unit: options}, 'enabled': {unit: bool}, 'types': {unit: plugin}} as tuned
    merges profile NAME of the image at ROOT, or
    {'error': message} as tuned refuses it."""
    below = "/profiles" if (root / "usr/lib/tuned/profiles").is_dir() else ""
    return load_from([str(root / f"usr/lib/tuned{below}"), str(root / f"etc/tuned{below}")],
                     name)


def load_from(directories: list[str], name: str) -> dict:
    """load() over the given profile directories, the later winning."""
    completed = subprocess.run([PYTHON, "-c", _PROGRAM, json.dumps(directories), name],
                               env={"PYTHONPATH": str(PACKAGE), "PATH": "/usr/bin:/bin"},
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)
