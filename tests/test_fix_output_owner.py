"""Issue 63: a fleet fix's output is code root runs on every host, so no other user may be
able to change it. The attack is performed as it would be: another local user ("nobody")
prepares the output directory in a shared sticky directory, root writes the fix, and that
user then tries to swap the playbook and a planner for their own."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sascheck.cli import main
from sascheck.reports.identity import FLEET_MARKER, FLEET_MARKER_TEXT

from .support.hosts import BASELINE_SETS, sas_host
from .test_reports import _scan_json

NOBODY = 65534
# The system's Python (setup --test installs python3.11): the test's own venv may lie under
# a home only root may enter.
SYSTEM_PYTHON = "/usr/bin/python3.11"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")

# What the other user does, as a script they run: swap every file of the output for their
# own (rename the original away, put theirs at its name), and report what they managed.
SWAP = r"""
import os, sys
out = sys.argv[1]
done = []
for directory, _, names in os.walk(out):
    for name in names:
        path = os.path.join(directory, name)
        try:
            os.rename(path, path + ".orig")
            with open(path, "w") as mine:
                mine.write("#!/bin/sh\ntouch /tmp/pwned-by-nobody\n")
            done.append(path)
        except OSError:
            pass
try:
    with open(os.path.join(out, "sascheck-fix.yml"), "x") as mine:
        mine.write("- hosts: all\n")
    done.append("new playbook")
except OSError:
    pass
print("\n".join(done))
"""


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    def drop() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    return subprocess.run([SYSTEM_PYTHON, *argv], capture_output=True, text=True,
                          timeout=60, preexec_fn=drop, cwd="/")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory like /tmp: anyone may create entries, only their owner may rename them."""
    base = Path(tempfile.mkdtemp(prefix="sascheck-shared-"))
    base.chmod(0o1777)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """One host's results in a fleet directory, as fleet-scan.yml leaves them."""
    base = tmp_path_factory.mktemp("fleet")
    results = base / "results"
    results.mkdir()
    (results / FLEET_MARKER).write_text(FLEET_MARKER_TEXT)
    root = sas_host(base / "sas01", tuned_active=None,
                    extra_files={"/etc/hostname": "sas01\n"})
    _scan_json(root, BASELINE_SETS, results / "sas01.json")
    return results


def _fix(fleet: Path, fmt: str, out: Path) -> int:
    return main(["fix", "--format", fmt, "--fleet", str(fleet), "-o", str(out)])


@pytest.mark.parametrize("fmt", ["ansible", "bash"])
def test_a_directory_another_user_made_is_refused(fleet, shared, fmt, capsys):
    out = shared / "fix"
    made = _as_nobody("-c", f"import os; os.mkdir({str(out)!r}, 0o755)")
    assert made.returncode == 0, made.stderr
    assert _fix(fleet, fmt, out) == 1
    assert f"it belongs to uid {NOBODY}, not to you" in capsys.readouterr().err
    assert os.listdir(out) == []  # nothing of root's was written where nobody may swap it
    assert not [name for name in os.listdir(shared) if name != "fix"]  # no build left over


@pytest.mark.parametrize("fmt", ["ansible", "bash"])
def test_another_user_cannot_swap_the_files_of_a_written_fix(fleet, shared, fmt):
    out = shared / "fix"
    assert _fix(fleet, fmt, out) == 0
    written = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert any(path.name == ("sascheck-fix.yml" if fmt == "ansible" else "sas01.sh")
               for path in written)
    attack = _as_nobody("-c", SWAP, str(out))
    assert attack.returncode == 0, attack.stderr
    assert attack.stdout.strip() == ""  # not one file swapped, nothing added
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == written
    status = out.stat()
    assert status.st_uid == 0 and not status.st_mode & 0o022


def test_an_own_empty_directory_is_used_and_risky_ones_are_refused(fleet, shared, tmp_path,
                                                                    capsys):
    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    assert _fix(fleet, "bash", own) == 0 and (own / "sas01.sh").is_file()
    capsys.readouterr()
    assert _fix(fleet, "bash", own) == 1  # an earlier fix's plans must not linger
    assert "it is not empty" in capsys.readouterr().err
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    assert _fix(fleet, "bash", open_to_all) == 1
    assert "writable by group or others" in capsys.readouterr().err
    link = shared / "link"
    link.symlink_to(own)
    assert _fix(fleet, "bash", link) == 1
    assert "symbolic link" in capsys.readouterr().err
    # a directory on the way that another user may change (theirs, inside /tmp)
    theirs = shared / "theirs"
    assert _as_nobody("-c", f"import os; os.mkdir({str(theirs)!r}, 0o755)").returncode == 0
    assert _fix(fleet, "bash", theirs / "fix") == 1
    assert f"belongs to uid {NOBODY}" in capsys.readouterr().err
