"""Generating and running remediations the way a user would: bash, ansible-playbook."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from sascheck.cli import main

ANSIBLE_BIN = Path(sys.executable).parent


def generate(fmt: str, output: Path, root: Path | None = None, sets: list[str] = (),
             extra: list[str] = ()) -> Path:
    argv = ["fix", "--format", fmt, "-o", str(output), *extra]
    if root is not None:
        argv += ["--root", str(root)]
    for assignment in sets:
        argv += ["--set", assignment]
    assert main(argv) == 0
    return output


def playbook_parts(text: str) -> set[str]:
    """A playbook's lint units: each line of the play's header (its vars vary with the
    site's values), each task from one "- name:" to the next (ansible-lint judges tasks)."""
    head, *tasks = re.split(r"(?m)^(?=    - name: )", text)
    return {*head.splitlines(), *tasks}


def script_lines(text: str) -> set[str]:
    """A script's shellcheck units: its lines with each quoted string and assigned word
    emptied, so a line differing only in the data it holds is one line (shellcheck's
    findings are about how a line quotes and uses its words, not which)."""
    text = re.sub(r"'[^'\n]*'", "''", text)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    return set(re.sub(r"=[A-Za-z0-9_./:,+%-]+", "=W", text).splitlines())


def covering(fixes: list[Path], work: Path, units: Callable[[str], set[str]]) -> list[Path]:
    """Few of ``fixes`` that hold every distinct unit of them all (``units``; a fix's own
    name and the roots' paths under ``work`` set aside), chosen greedily. A linter reading
    these reads each template output once, not once per root that renders it (#67)."""
    def held_by(fix: Path) -> set[str]:
        text = fix.read_text().replace(fix.stem, "FIX")
        return units(re.sub(re.escape(str(work)) + r"/r\d+", "WORK", text))

    held = {fix: held_by(fix) for fix in fixes}
    left, chosen = set().union(*held.values()), []
    while left:
        best = max(held, key=lambda fix: len(held[fix] & left))
        chosen.append(best)
        left -= held[best]
    return chosen


def run_bash(script: Path, root: Path | None, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {})}
    if root is not None:
        environment["SASCHECK_ROOT"] = str(root)
    completed = subprocess.run(["bash", str(script), *args], env=environment,
                               capture_output=True, text=True, timeout=120)
    # 3: done, with work left to a human (listed); tests/test_admin_first_hour.py checks it.
    assert completed.returncode in (0, 3), completed.stdout + completed.stderr
    if "--dry-run" not in args and "--revert" not in args:
        assert (completed.returncode == 3) == ("needs a human" in completed.stdout), \
            completed.stdout
    return completed


def ansible_available() -> bool:
    return (ANSIBLE_BIN / "ansible-playbook").exists() or shutil.which("ansible-playbook") is not None


def limited_hosts(directory: Path, inventory: str, limit: Path) -> list[str]:
    """The hosts ansible-playbook itself plays with ``--limit @limit`` on ``inventory``
    (its --list-hosts), sorted."""
    (directory / "inventory.ini").write_text(inventory)
    (directory / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks: []\n")
    env = {**os.environ, "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}", "ANSIBLE_NOCOLOR": "1"}
    ran = subprocess.run([str(ANSIBLE_BIN / "ansible-playbook"), "-i", "inventory.ini",
                          "--limit", f"@{limit}", "--list-hosts", "play.yml"], cwd=directory,
                         env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = [line.strip() for line in ran.stdout.splitlines()]
    start = next(index for index, line in enumerate(lines) if line.startswith("hosts ("))
    return sorted(line for line in lines[start + 1:] if line)


def _ansible(tool: str) -> str:
    local = ANSIBLE_BIN / tool
    return str(local) if local.exists() else tool


LAST_PLAYBOOK_OUTPUT: list[str] = []  # the last run's output, for a failing test to show


def changed_tasks(output: str) -> list[str]:
    """The tasks a playbook run reported changed (its TASK header before each changed:)."""
    tasks, current = [], ""
    for line in output.splitlines():
        if line.startswith("TASK ["):
            current = line
        elif line.startswith("changed:"):
            tasks.append(f"{current} {line}")
    return tasks


def run_playbook(playbook: Path, root: Path | None, *args: str) -> dict[str, int]:
    """ansible-playbook against this machine (connection local); the recap's counters."""
    argv = [_ansible("ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", f"ansible_python_interpreter={sys.executable}", str(playbook), *args]
    if root is not None:
        argv += ["-e", f"sascheck_root={root}"]
    if not any("sascheck_allow_manual=" in a for a in args):
        # Test images leave work to a human (an offline image cannot run tuned-adm).
        argv += ["-e", "sascheck_allow_manual=true"]
    if "SASCHECK_MANIFEST" in os.environ and not any("sascheck_manifest=" in a for a in args):
        # The session's manifest (conftest), never the playbook's default in /var/lib.
        argv += ["-e", f"sascheck_manifest={os.environ['SASCHECK_MANIFEST']}"]
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0",
           "ANSIBLE_HOST_KEY_CHECKING": "0", "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}"}
    completed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    LAST_PLAYBOOK_OUTPUT[:] = [completed.stdout]
    recap = re.search(r"localhost\s+:\s+(.*)$", completed.stdout, re.MULTILINE)
    assert recap, completed.stdout
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", recap.group(1))}


def lint_playbook(playbook: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{ANSIBLE_BIN}:{os.environ['PATH']}", "NO_COLOR": "1"}
    return subprocess.run([_ansible("ansible-lint"), "--offline", "-f", "pep8", str(playbook)],
                          cwd=playbook.parent, env=env, capture_output=True, text=True,
                          timeout=600)


# Where a fix persists a sysctl (issue 51): sascheck's sysctl.d file, or its tuned profile.
OURS_SYSCTL_D = "etc/sysctl.d/99-zz-sascheck.conf"
OURS_PROFILE = "etc/tuned/sas-performance/tuned.conf"


def sysctl_d_keys(root: Path) -> dict[str, str]:
    """The settings of sascheck's sysctl.d file in the image ({} where there is none)."""
    path = root / OURS_SYSCTL_D
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split(" = ", 1) for line in lines if " = " in line)


def profile_sysctl(root: Path) -> dict[str, str]:
    """The [sysctl] settings of sascheck's tuned profile in the image, as tuned's parser
    reads them (the key and value stripped; the last line for a key wins)."""
    path = root / OURS_PROFILE
    section, found = "", {}
    for line in (path.read_text().splitlines() if path.exists() else []):
        if line.startswith("["):
            section = line.strip()
        elif section == "[sysctl]" and "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip()
    return found
