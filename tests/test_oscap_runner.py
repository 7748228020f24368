"""The tests' oscap runner: past oscap 1.3.7's own rare crash, never past a real failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.oscap import run_oscap


def _flaky_oscap(tmp_path: Path, crashes: int, then_exit: int) -> list[str]:
    """A stand-in for the oscap binary that kills itself with SIGSEGV ``crashes`` times, as
    the CI run's oscap did, then exits ``then_exit``; it counts its runs in a file."""
    counter = tmp_path / "runs"
    counter.write_text("0")
    script = tmp_path / "oscap"
    script.write_text(
        "#!/bin/bash\n"
        f'runs=$(( $(cat "{counter}") + 1 )); echo "$runs" > "{counter}"\n'
        f'if (( runs <= {crashes} )); then ulimit -c 0; kill -SEGV $$; fi\n'
        f'echo "oscap error" >&2; exit {then_exit}\n')
    script.chmod(0o755)
    return [str(script)]


def test_a_crash_by_signal_is_run_again(tmp_path):
    with pytest.warns(UserWarning, match="signal 11"):
        completed = run_oscap(_flaky_oscap(tmp_path, crashes=2, then_exit=2), dict(os.environ))
    assert completed.returncode == 2
    assert (tmp_path / "runs").read_text().strip() == "3"


def test_three_crashes_are_reported_not_hidden(tmp_path):
    with pytest.warns(UserWarning, match="signal 11"):
        completed = run_oscap(_flaky_oscap(tmp_path, crashes=5, then_exit=0), dict(os.environ))
    assert completed.returncode == -11
    assert (tmp_path / "runs").read_text().strip() == "3"


def test_oscap_failing_by_itself_is_not_run_again(tmp_path):
    completed = run_oscap(_flaky_oscap(tmp_path, crashes=0, then_exit=1), dict(os.environ))
    assert completed.returncode == 1 and "oscap error" in completed.stderr
    assert (tmp_path / "runs").read_text().strip() == "1"
