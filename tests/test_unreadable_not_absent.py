"""Unreadable is not absent (issue 23): a directory the scanner may not search (mode 000,
scanned without DAC override) makes the rules that depend on it `error` naming the path,
never a verdict read from a file that only looked missing. The scan runs as nobody, as an
unprivileged administrator's would; root (DAC override) reads the same tree."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from sascheck.rules import load_catalogue
from sascheck.scanner.scan import run_scan

from .support.hosts import BASELINE_SETS, sas_host

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to nobody")


def _scan_as(uid: int, root: Path) -> dict:
    """run_scan in a child that has dropped to ``uid`` (everything imported first)."""
    catalogue = load_catalogue()
    import lxml.etree  # noqa: F401  (loaded while the package is readable)

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, scan, send the JSON back
        status = 1
        try:
            os.close(read)
            if uid:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            result = run_scan(catalogue, "default", BASELINE_SETS, str(root), "bare_metal")
            with os.fdopen(write, "wb") as out:
                out.write(json.dumps(result.to_dict()).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as incoming:
        data = incoming.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and data, "the scan as an unprivileged user failed"
    return {rule["id"]: rule for rule in json.loads(data)["rules"]}


@pytest.fixture
def world_readable_root():
    """A host image nobody can walk (pytest's own tmp_path is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="sascheck-unreadable-"))
    base.chmod(0o755)
    try:
        yield sas_host(base / "root")
    finally:
        for path in base.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base)


def test_an_unsearchable_tuned_directory_is_an_error_not_no_profile(world_readable_root):
    root = world_readable_root
    as_root = _scan_as(0, root)
    (root / "etc/tuned").chmod(0)
    as_root_again = _scan_as(0, root)  # DAC override: root still reads it
    nobody = _scan_as(NOBODY, root)
    for rule in ("tuned_profile", "dirty_ratio_at_boot", "io_tuning_at_boot"):
        assert as_root[rule]["result"] == as_root_again[rule]["result"] == "pass"
        assert nobody[rule]["result"] == "error", (rule, nobody[rule]["actual"])
    evidence = nobody["tuned_profile"]["evidence"]
    assert any("/etc/tuned/active_profile" in (e.get("note") or "") and
               "Permission denied" in e["note"] for e in evidence)
    assert "what tuned sets at boot cannot be told" in nobody["dirty_ratio_at_boot"]["message"]


def test_an_unreadable_sas_configuration_directory_is_named(world_readable_root):
    root = world_readable_root
    (root / "opt/sas/SASHome/SASFoundation/9.4").chmod(0)
    nobody = _scan_as(NOBODY, root)
    for rule in ("io_scheduler", "read_ahead", "sas_dirs_separate", "sas_fs_noatime"):
        assert nobody[rule]["result"] == "error"
        message = nobody[rule]["message"]
        assert "/opt/sas/SASHome/SASFoundation/9.4/sasv9.cfg: cannot read" in message
        assert "WORK and UTILLOC may be on file systems not judged" in message
    assert _scan_as(0, root)["io_scheduler"]["result"] == "pass"
