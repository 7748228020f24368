"""The SAS accounts' test hosts: the baseline host with its pam_limits files replaced, the
bash fix of one limit, and a rule's verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from .hosts import BASELINE_SETS, sas_host
from .remedy import generate

RHEL9_KERNEL = "5.14.0-427.13.1.el9_4.x86_64"
RHEL8_KERNEL = "4.18.0-513.el8.x86_64"
RHEL7_KERNEL = "3.10.0-1160.el7.x86_64"
# /proc/1/limits of a RHEL 9 host with 16 GiB (init's nproc is the kernel's max_threads / 2).
INIT_LIMITS = """\
Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max stack size            8388608              unlimited            bytes
Max processes             63283                63283                processes
Max open files            1073741816           1073741816           files
"""


def host(path: Path, limits: dict[str, str] | None = None, kernel: str = RHEL9_KERNEL,
         **files: str) -> Path:
    """The baseline host with its pam_limits files replaced by ``limits`` (path -> text)."""
    extra = {**(limits or {}), **{"/" + name.replace("__", "/"): text
                                  for name, text in files.items()}}
    return sas_host(path, kernel=kernel, sas_limits=None, extra_files=extra)


def nofile_fix(tmp_path: Path, root: Path, *extra: str) -> Path:
    """The bash fix of sas_accounts_nofile alone, for ROOT."""
    return generate("bash", tmp_path / "fix.sh", root, [*BASELINE_SETS],
                    ["--rule", "sas_accounts_nofile", *extra])


def judged(scan, root: Path, rule: str = "sas_accounts_nofile", profile: str = "default",
           *sets: str) -> dict:
    return scan(root, *sets, profile=profile)["by_id"][rule]


# -- pam_limits' own reading (issue 64), linux-pam v1.5.1 modules/pam_limits/pam_limits.c -----
# The module as Debian's libpam-modules 1.5.2 installs it (this machine's own): it reads
# /proc/sys/fs/nr_open for an unlimited nofile (commit 3234488f, first in 1.5.2). The one
# before 1.5.2 is the same file with that path blanked: such builds do not carry it.
DEBIAN_PAM_LIMITS = next(iter(sorted(Path("/usr/lib").glob("*-linux-gnu*/security/pam_limits.so"))),
                         Path("/usr/lib/x86_64-linux-gnu/security/pam_limits.so"))
RHEL_PAM_LIMITS = "/usr/lib64/security/pam_limits.so"


def pam_module(nr_open: bool) -> bytes:
    if not DEBIAN_PAM_LIMITS.is_file():
        pytest.skip("needs Debian's libpam-modules (pam_limits.so) to copy into the image")
    module = DEBIAN_PAM_LIMITS.read_bytes()
    assert b"/proc/sys/fs/nr_open" in module
    return module if nr_open else module.replace(b"/proc/sys/fs/nr_open", b"/proc/sys/fs/xx_xxxx")


def with_module(root: Path, nr_open: bool | None) -> Path:
    """``root`` with this machine's pam_limits.so at RHEL's path (``nr_open``: as 1.5.2 on,
    which reads fs.nr_open for an unlimited nofile; False: as before; None: no module)."""
    if nr_open is not None:
        module = root / RHEL_PAM_LIMITS.lstrip("/")
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_bytes(pam_module(nr_open))
    return root
