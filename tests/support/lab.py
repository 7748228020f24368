"""Loop-device file systems for live tests: made by the test, removed whatever happens.

Needs root, losetup and mkfs; in CI (CI=true) a missing prerequisite fails instead of
skipping, so a live test cannot silently stop running. Import ``require_lab`` into a test
module to apply it (it is autouse).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

# The lab is this machine, which need not run RHEL (CI runs Debian): judge it all the same.
LAB_HOST_SETS = ["judge_any_os=true"]
LAB_HOST_ARGS = [arg for value in LAB_HOST_SETS for arg in ("--set", value)]
TOOLS = ("losetup", "mount", "umount", "mkfs.xfs", "mkfs.ext4", "mkfs.ext3")


def prerequisites_missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return "missing " + ", ".join(missing)
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control"
    return None


def require(reason: str | None, what: str = "live test") -> None:
    """Skip for ``reason`` (a missing prerequisite; None: nothing missing), but fail in CI
    (CI=true), so that such a test cannot silently stop running."""
    if reason and os.environ.get("CI"):
        pytest.fail(f"{what} cannot run in CI: {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def require_lab() -> None:
    require(prerequisites_missing())


@dataclass
class LabFs:
    name: str
    mountpoint: Path
    device: str  # /dev/loopN
    fstype: str

    @property
    def queue(self) -> Path:
        return Path("/sys/block") / Path(self.device).name / "queue"


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def make_fs(stack: ExitStack, base: Path, name: str, fstype: str, options: str,
             size_mb: int, direct_io: bool = False) -> LabFs:
    """A sparse image, a loop device (``direct_io``: bypassing the host's page cache for
    the image, so throughput is steadier), a file system mounted with ``options``."""
    image = base / f"{name}.img"
    with open(image, "wb") as handle:
        handle.truncate(size_mb * 1024 * 1024)
    device = _run("losetup", "--find", "--show", *(["--direct-io=on"] if direct_io else []),
                  str(image))
    stack.callback(subprocess.run, ["losetup", "-d", device], check=False)
    _run(f"mkfs.{fstype}", *(["-q", "-f"] if fstype == "xfs" else ["-q", "-F"]), device)
    mountpoint = base / name
    mountpoint.mkdir()
    _run("mount", "-t", fstype, "-o", options, device, str(mountpoint))
    stack.callback(subprocess.run, ["umount", "-l", str(mountpoint)], check=False)
    return LabFs(name, mountpoint, device, fstype)
