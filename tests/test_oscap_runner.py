"""The tests' oscap runner: past oscap 1.3.7's own rare crash, never past a real failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import oscap
from tests.support.oscap import run_oscap


def _flaky_oscap(tmp_path: Path, crashes: int, then_exit: int, hangs: int = 0) -> list[str]:
    """A stand-in for the oscap binary that hangs (as 1.3.7's probe deadlock does) ``hangs``
    times, then kills itself with SIGSEGV ``crashes`` times, as the CI run's oscap did, then
    exits ``then_exit``; it counts its runs in a file."""
    counter = tmp_path / "runs"
    counter.write_text("0")
    script = tmp_path / "oscap"
    script.write_text(
        "#!/bin/bash\n"
        f'runs=$(( $(cat "{counter}") + 1 )); echo "$runs" > "{counter}"\n'
        f'if (( runs <= {hangs} )); then exec sleep 600; fi\n'
        f'if (( runs <= {hangs + crashes} )); then ulimit -c 0; kill -SEGV $$; fi\n'
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


def test_a_hung_run_is_cut_and_run_again(tmp_path, monkeypatch):
    """Each attempt has its own limit, the first short (a deadlock is cut early, #67), the
    last long; a run that ends by itself after a hang is the one read."""
    monkeypatch.setattr(oscap, "ATTEMPT_SECONDS", (1, 1, 30))
    with pytest.warns(UserWarning, match="hung past 1 s on attempt 2"):
        completed = run_oscap(_flaky_oscap(tmp_path, crashes=0, then_exit=2, hangs=2),
                              dict(os.environ))
    assert completed.returncode == 2
    assert (tmp_path / "runs").read_text().strip() == "3"


def test_the_last_attempt_gets_the_longest_limit():
    assert oscap.ATTEMPT_SECONDS[-1] == max(oscap.ATTEMPT_SECONDS) >= 120
