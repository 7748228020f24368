"""docs/adding-a-check-kind.md works as written: its blocks are the code of sysctl_fields as
it ships, nothing of the kind is left without them, its rule is fixed by Ansible and
collected by collect.sh, and the page names every place a kind lives."""

from __future__ import annotations

import re
import subprocess

import pytest

from sascheck.rules import load_catalogue
from sascheck.scanner.scan import run_scan
from sascheck.scanner.sources.collect_script import SCRIPT, with_current_layout
from sascheck.scanner.sources.snapshot import opened_snapshot

from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import ansible_available, generate, run_playbook
from .test_docs import DOCS, _persisted_keys

KIND_BLOCK = re.compile(r"```[a-z]+\n# (?P<file>[\w./-]+)\n(?P<body>.*?)\n```", re.S)
PROJECT = DOCS.parent


def _kind_blocks() -> list[tuple[str, str]]:
    text = (DOCS / "adding-a-check-kind.md").read_text(encoding="utf-8")
    return [(block["file"], block["body"]) for block in KIND_BLOCK.finditer(text)]


def test_the_kind_pages_example_is_the_code_as_it_ships():
    """Issue 47: docs/adding-a-check-kind.md shows sysctl_fields as written in each file."""
    blocks = _kind_blocks()
    assert {file for file, _ in blocks} >= {
        "rules/check_kinds.py", "scanner/checks/kernel.py", "scanner/checks/__init__.py",
        "content/checks/kernel.py", "content/checks/__init__.py", "rules/kernel_sem.yml",
        "remediations/templates/bash/sysctl_fields.sh.j2", "rules/variables.yml"}
    for file, body in blocks:
        assert body in (PROJECT / file).read_text(encoding="utf-8"), file


def test_without_the_kind_pages_blocks_nothing_of_the_kind_is_left(tmp_path):
    """The blocks are the whole kind: taken out of a copy of the sources (a block that is a
    whole file takes the file), no file names the kind, its rule or its site values, but
    for the kind's place in GROUPS, which the page asks for in words."""
    sources = [path for top in ("rules", "scanner", "content", "remediations")
               for path in (PROJECT / top).rglob("*")
               if path.is_file() and path.suffix in (".py", ".yml", ".j2", ".sh")
               and "__pycache__" not in path.parts and path.name != "collect.sh"]
    copies = {path.relative_to(PROJECT).as_posix(): path.read_text(encoding="utf-8")
              for path in sources}
    for file, body in _kind_blocks():
        if copies[file].strip() == body.strip():
            del copies[file]
        else:
            copies[file] = copies[file].replace(body, "", 1)
    # The kind's at-boot sibling (sysctl_fields_at_boot, kernel_sem_at_boot), built after the
    # page, stays: it is a kind and a rule of its own.
    del copies["rules/kernel_sem_at_boot.yml"]
    left = [(file, line) for file, text in copies.items() for line in text.splitlines()
            if re.search(r"(?:sysctl_fields|kernel_sem)(?!_at_boot|_for_boot)"
                         r"|semm[a-z]+_min|semopm_min", line)]
    assert left == [("rules/check_kinds.py",
                     '               ("thp_mode", "thp_at_boot", "sysctl_value", '
                     '"sysctl_at_boot", "sysctl_fields",')]


def test_the_kind_pages_rule_is_fixed_by_ansible(tmp_path):
    """The page's example mended by the Ansible fix on a RHEL 7 image (its kernel's
    250 32000 32 128): the fields below are raised, SEMMNS kept, and persisted; a second run
    changes nothing."""
    if not ansible_available():
        pytest.skip("ansible-core not installed")

    root = sas_host(tmp_path / "root", kernel="3.10.0-1160.el7.x86_64",
                    pretty_name="Red Hat Enterprise Linux Server release 7.9 (Maipo)",
                    extra_files={"/proc/sys/kernel/sem": "250\t64000\t32\t128\n"})
    playbook = generate("ansible", tmp_path / "fix.yml", root, [*BASELINE_SETS],
                        ["--profile", "viya3", "--rule", "kernel_sem"])
    assert run_playbook(playbook, root)["failed"] == 0
    assert _persisted_keys(root)["kernel.sem"] == "512 64000 256 1024"
    assert run_playbook(playbook, root)["changed"] == 0


def test_the_kind_pages_rule_is_collected_by_collect_sh(tmp_path):
    """collect.sh reads /proc/sys/kernel/sem because the kind says its key is one
    (proc_sys_key): its snapshot judges as --root does."""
    catalogue = load_catalogue()
    for sem, expected in (("250\t32000\t32\t128\n", "fail"), ("512\t32000\t256\t1024\n", "pass")):
        root = sas_host(tmp_path / f"root{expected}", extra_files={"/proc/sys/kernel/sem": sem})
        script = tmp_path / "collect.sh"
        script.write_text(with_current_layout(SCRIPT, catalogue))
        archive = tmp_path / f"snap-{expected}.tar.gz"
        ran = subprocess.run(["sh", str(script), "-o", str(archive)], capture_output=True,
                             text=True, env={"PATH": "/usr/bin:/bin", "SASCHECK_ROOT": str(root)},
                             timeout=120)
        assert ran.returncode == 0, ran.stderr
        direct = run_scan(catalogue, "viya3", BASELINE_SETS, str(root), "bare_metal").to_dict()
        with opened_snapshot(str(archive)) as snapshot:
            collected = run_scan(catalogue, "viya3", BASELINE_SETS, snapshot.root,
                                 "bare_metal").to_dict()
        verdict = {r["id"]: r["result"] for r in direct["rules"]}["kernel_sem"]
        assert verdict == expected
        assert {r["id"]: r["result"] for r in collected["rules"]}["kernel_sem"] == verdict


def test_adding_a_check_kind_names_every_place_a_kind_lives():
    text = (DOCS / "adding-a-check-kind.md").read_text(encoding="utf-8")
    for place in ("rules/check_kinds.py", "scanner/checks/", "CHECKS", "content/checks/",
                  "GENERATORS", "remediations/templates/bash/", "scripts/update-generated",
                  "tests/test_check_kinds.py", "tests/test_parity.py", "host_layout/"):
        assert place in text, place
