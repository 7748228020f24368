"""The quick tier (`pytest -m "not slow"`) leaves out every module that runs a real consumer:
a module that starts using oscap, Chromium or Ansible is marked (tests/conftest.py NEEDS), or
this fails."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import NEEDS

TESTS = Path(__file__).resolve().parent
# What a module calls when it runs each consumer (the helpers in tests/ that run them).
USES = {"oscap": r"\boscap_eval\(|\brun_oscap\(|\boscap_verdict\(|\[\"oscap\"",
        "browser": r"\bfrom \.support\.browser import|\bbrowser\.",
        "ansible": r"\brun_playbook\(|\blint_playbook\(|ANSIBLE_BIN / \"ansible"}


def test_every_module_that_runs_a_consumer_is_in_its_tier():
    unmarked = []
    for path in sorted(TESTS.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        for need, pattern in USES.items():
            if re.search(pattern, text) and path.stem not in NEEDS[need] and not any(
                    path.stem in modules for modules in NEEDS.values()):
                unmarked.append(f"{path.stem} runs {need}")
    assert not unmarked, unmarked
