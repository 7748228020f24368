"""The host layout has one home (rules/host_layout/): every engine reads it from there,
and the committed collect.sh carries its current rendering."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

from sascheck.rules import host_layout
from sascheck.scanner.sources.collect_script import (
    LAYOUT_BEGIN,
    LAYOUT_END,
    SCRIPT_FILE,
    with_current_layout,
)

REPO = Path(__file__).resolve().parent.parent
ENGINES = ("scanner", "content", "remediations", "reports", "sascheck")
FACTS = [*host_layout.THP_DIRS, *host_layout.CONTAINER_MARKERS, *host_layout.LIBVIRT_RUNNING_DOMAINS,
         host_layout.LIBVIRT_DEFINED_DOMAINS,
         *host_layout.TUNED_ACTIVE_FILES, *host_layout.SYSV_RUNLEVEL_DIRS,
         *host_layout.SYSTEMD_WANTS_DIRS, *host_layout.SAS_HOMES, *host_layout.SAS_FOUNDATIONS,
         *host_layout.SAS_CONFIG_DIRS, host_layout.SAS_VIYA_SPRE_CONFIG,
         *host_layout.DMI_FILES, *host_layout.UDEV_RULES_DIRS, *host_layout.LEGACY_GRUB_CONFS,
         host_layout.GRUB_DEFAULTS, host_layout.KERNEL_CMDLINE, host_layout.BLS_ENTRIES,
         host_layout.GRUBENV, host_layout.PROC_MODULES, host_layout.TUNED_SHIPPED_PROFILES,
         "microsoft corporation"]


def _string_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_engine_restates_a_host_fact():
    restated = []
    for folder in ENGINES:
        for path in (REPO / folder).rglob("*.py"):
            for literal in _string_literals(path):
                restated += [f"{path.relative_to(REPO)}: {fact}" for fact in FACTS
                             if fact in literal]
    shell = [*sorted((REPO / "remediations/templates/bash/lib").glob("*.sh")), SCRIPT_FILE]
    for path in shell:
        text = path.read_text(encoding="utf-8")
        if LAYOUT_BEGIN in text:  # the generated block is the layout itself
            text = text.split(LAYOUT_BEGIN)[0] + text.split(LAYOUT_END)[1]
        restated += [f"{path.relative_to(REPO)}: {fact}" for fact in FACTS if fact in text]
    assert not restated, "host facts restated outside rules/host_layout/:\n" + "\n".join(
        restated)


def test_committed_collect_script_has_the_current_layout():
    text = SCRIPT_FILE.read_text(encoding="utf-8")
    assert text == with_current_layout(text), "run scripts/update-generated"


def test_shell_layout_is_what_the_python_engines_use():
    """sh reads every LAYOUT_* word back as the Python value, long ones continued in pieces."""
    names = {"THP_DIRS": " ".join(host_layout.THP_DIRS),
             "SYSTEMD_WANTS_DIRS": " ".join(host_layout.SYSTEMD_WANTS_DIRS),
             "SAS_FOUNDATIONS": " ".join(host_layout.SAS_FOUNDATIONS),
             "SAS_VIYA_SPRE_CONFIG": host_layout.SAS_VIYA_SPRE_CONFIG,
             "VM_VENDORS": host_layout.vm_vendor_regex()}
    script = host_layout.shell_layout() + "".join(
        f'printf "%s\\n" "$LAYOUT_{name}"\n' for name in names)
    printed = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    assert printed == list(names.values())
    assert max(map(len, host_layout.shell_layout().splitlines())) <= 100
    assert host_layout.legacy_kernel("3.10.0-1160.el7.x86_64")
    assert not host_layout.legacy_kernel("4.18.0-513.el8.x86_64")
