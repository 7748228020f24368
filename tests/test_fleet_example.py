"""examples/fleet (issue 65): a fix day for a mixed fleet, run as its README writes it, in a
copy of the example whose three images are built from test roots: a Grid node with THP on
and no tuned profile, a compliant Grid node, and an untouched Viya 3.5 host under viya3."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .support.browser import fleet_index
from .support.hosts import sas_host, tree_digest
from .support.lab import require
from .support.remedy import ANSIBLE_BIN, ansible_available
from .test_viya3 import RHEL8_SYSCTL_CONF, UNTOUCHED, viya_host

PROJECT = Path(__file__).resolve().parent.parent
EXAMPLE = PROJECT / "examples" / "fleet"
MANIFESTS = Path("/var/lib/sascheck")


def _images(directory: Path) -> dict[str, Path]:
    def named(name: str) -> dict[str, str]:
        return {"/etc/hostname": f"{name}\n",
                "/etc/machine-id": f"{(name.encode().hex() * 8)[:32]}\n"}

    images = directory / "images"
    return {
        "sasgrid01": sas_host(images / "sasgrid01", tuned_active=None,
                              thp_enabled="[always] madvise never",
                              extra_files=named("sasgrid01")),
        "sasgrid02": sas_host(images / "sasgrid02", extra_files=named("sasgrid02")),
        "viya01": viya_host(images / "viya01", UNTOUCHED, RHEL8_SYSCTL_CONF, tuned_active=None,
                            extra_files=named("viya01")),
    }


def _commands() -> list[str]:
    """The README's sh block, one command a line (comments left out)."""
    text = (EXAMPLE / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert block, "examples/fleet/README.md has no sh block"
    return [line for line in block.group(1).splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def _listing(directory: Path) -> set[str]:
    return {path.name for path in directory.iterdir()} if directory.is_dir() else set()


def _results(directory: Path) -> dict[str, dict]:
    return {name: json.loads((directory / "results" / f"{name}.json").read_text())
            for name in ("sasgrid01", "sasgrid02", "viya01")}


def _verdict(data: dict, rule: str) -> str:
    return next(r["result"] for r in data["rules"] if r["id"] == rule)


def test_a_fix_day_runs_as_the_example_writes_it(tmp_path):
    require(None if ansible_available() else "ansible-playbook is not installed", "ansible")
    work = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, work)
    images = _images(work)
    before = {name: tree_digest(root, times=False) for name, root in images.items()}
    manifests_before = _listing(MANIFESTS)
    env = {"PATH": f"{Path(sys.executable).parent}:{ANSIBLE_BIN}:/usr/bin:/bin:/usr/sbin:/sbin",
           "SASCHECK_HOME": str(PROJECT), "HOME": str(tmp_path), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCALHOST_WARNING": "0", "LANG": os.environ.get("LANG", "C.UTF-8")}
    outputs = []
    for command in _commands():
        ran = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=work, env=env,
                             capture_output=True, text=True, timeout=900)
        assert ran.returncode == 0, (command, ran.stdout[-4000:], ran.stderr[-3000:])
        outputs.append((command, ran.stdout + ran.stderr))
        if command.startswith("sascheck report"):
            # scanned once: each host under its group's profile, the page with its column
            scanned = _results(work)
            assert {name: data["profile"] for name, data in scanned.items()} == {
                "sasgrid01": "default", "sasgrid02": "default", "viya01": "viya3"}
            assert _verdict(scanned["viya01"], "max_map_count_at_boot") == "fail"
            page = fleet_index((work / "fleet.html").read_text())
            assert {row["n"]: row["pr"] for row in page["hosts"]} == {
                "sasgrid01": "default", "sasgrid02": "default", "viya01": "viya3"}
        if "--check" in command:
            assert {name: tree_digest(root, times=False) for name, root in images.items()} \
                == before
    assert (work / "failing.txt").read_text().split() == ["sasgrid01", "viya01"]
    fixed = next(out for command, out in outputs
                 if "sascheck-fix.yml --limit @failing.txt" in command and "--check" not in command)
    # THP 'always' is a running value an image cannot take: the play says so
    assert "thp_disabled: a running value: an offline image has no running kernel" in fixed
    # the rescan (before the revert): each fixed host passes under its own profile, and
    # diff, run as written, found no host worse
    rescanned = _results(work)
    assert rescanned["viya01"]["profile"] == "viya3"
    assert {name: _verdict(data, "tuned_profile") for name, data in rescanned.items()} == \
        dict.fromkeys(rescanned, "pass")
    assert _verdict(rescanned["viya01"], "max_map_count_at_boot") == "pass"
    # the revert ends green on every host, changed or not, and each image is as it was
    assert {name: tree_digest(root, times=False) for name, root in images.items()} == before
    assert not (work / "images/sasgrid02.manifest").exists()  # never changed: none
    assert (work / "images/sasgrid01.manifest").is_file()
    # no manifest of these hosts outside the example (what other tests may write there is
    # theirs: only this example's host names count)
    assert not [name for name in _listing(MANIFESTS) - manifests_before
                if any(host in name for host in images)]

