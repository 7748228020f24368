"""Attacks on the collectors (issue 34), performed for real: collect.sh run by sh as root, and
`sascheck collect`, each in a private mount namespace (unshare -m) whose /mnt is a fresh
tmpfs holding the "host's" own files, the secrets and the directories an attacker aims at.
The namespace keeps whatever an attack manages to do away from this machine; the listing of
/mnt taken inside it afterwards shows whether it did anything.

Both collectors get the same attacks (COLLECTORS); a test asserts on ``Outcome``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from sascheck.scanner.sources.collect_script import SCRIPT_FILE

from .lab import require

SECRET = "TOP-SECRET-0600"
PRECIOUS = "precious host data\n"
COLLECTORS = ("collect.sh", "sascheck collect")
SASCHECK = str(Path(sys.executable).with_name("sascheck"))

WANTS = "systemd/system/multi-user.target.wants"
# The host as the attacks find it: a secret only root may read, files an attack would
# truncate, and an empty cron.d.
HOST_SETUP = f"""
mount -t tmpfs sascheck-victim /mnt
mkdir -p /mnt/cron.d /mnt/hostetc/{WANTS} /mnt/sysctl.d
printf '%s' {shlex.quote(SECRET)} > /mnt/secret && chmod 600 /mnt/secret
for file in /mnt/hostetc/hostname /mnt/hostetc/{WANTS}/tuned.service /mnt/sysctl.d/99-site.conf \
        /mnt/victim.cfg; do
    printf '%s' {shlex.quote(PRECIOUS)} > "$file"
done
"""


def require_namespaces() -> None:
    reason = None
    if os.geteuid() != 0:
        reason = "needs root"
    elif shutil.which("unshare") is None:
        reason = "needs unshare (util-linux)"
    require(reason, "collector attack tests")


@dataclass
class Outcome:
    returncode: int
    stderr: str
    archive: dict[str, bytes]  # member name -> content (links: b"-> target")
    host: dict[str, str]  # /mnt after the run: path -> content ("<dir>" for directories)
    leftovers: list[str]  # what the run left in its TMPDIR

    @property
    def manifest(self) -> str:
        return self.archive.get("manifest.json", b"").decode()

    def leaked(self) -> bool:
        return any(SECRET.encode() in content for content in self.archive.values())

    def assert_host_untouched(self) -> None:
        expected = {"/mnt/cron.d": "<dir>", "/mnt/hostetc": "<dir>", "/mnt/sysctl.d": "<dir>",
                    "/mnt/secret": SECRET, "/mnt/hostetc/hostname": PRECIOUS,
                    f"/mnt/hostetc/{WANTS}/tuned.service": PRECIOUS,
                    "/mnt/sysctl.d/99-site.conf": PRECIOUS, "/mnt/victim.cfg": PRECIOUS}
        path = "/mnt/hostetc"
        for part in WANTS.split("/"):
            path += "/" + part
            expected[path] = "<dir>"
        assert self.host == expected, self.stderr


def _collector_command(collector: str, image: Path | None, output: str, args: list[str],
                       sets: list[str]) -> str:
    """The command line, as root runs it (collect.sh takes its root from SASCHECK_ROOT)."""
    prefix = ["env", f"SASCHECK_ROOT={image}"] if image and collector == "collect.sh" else []
    argv = ["sh", str(SCRIPT_FILE)] if collector == "collect.sh" else [SASCHECK, "collect"]
    if image and collector != "collect.sh":
        argv += ["--root", str(image)]
    argv += ["-o", output]
    for assignment in sets:
        argv += ["--set", assignment]
    return shlex.join([*prefix, *argv, *args])


def attack(tmp_path: Path, collector: str, image: Path | None = None, live_setup: str = "",
           args: list[str] | None = None, sets: list[str] | None = None,
           output: str = "snapshot.tar.gz", before: str = "", during: str = "",
           timeout: int = 120) -> Outcome:
    """Run ``collector`` as root in a private mount namespace over ``image`` (None: the live
    host, after ``live_setup`` has shaped it), from ``tmp_path/work``. ``before`` runs in
    the work directory first; ``during`` runs in the background while the collector runs."""
    require_namespaces()
    work, scratch = tmp_path / "work", tmp_path / "scratch"
    work.mkdir(exist_ok=True)
    scratch.mkdir(exist_ok=True)
    command = _collector_command(collector, image, output, args or [], sets or [])
    report = tmp_path / "host-after"
    shutil.rmtree(report, ignore_errors=True)  # a test may attack several times
    script = "\n".join([
        "set -e", HOST_SETUP, live_setup, f"cd {shlex.quote(str(work))}", before,
        f"( {during} ) & racer=$!" if during else "racer=",
        f"export TMPDIR={shlex.quote(str(scratch))}",
        "set +e", f"{command} 2> ../stderr.txt; echo $? > ../rc.txt",
        '[ -z "$racer" ] || kill "$racer" 2>/dev/null; wait',
        f"mkdir {shlex.quote(str(report))} && cp -a /mnt/. {shlex.quote(str(report))}/",
    ])
    subprocess.run(["unshare", "-m", "sh", "-c", script], check=True, timeout=timeout,
                   stdin=subprocess.DEVNULL)
    host = {}
    for path in sorted(report.rglob("*")):
        shown = "/mnt/" + str(path.relative_to(report))
        if path.is_symlink():
            host[shown] = "-> " + os.readlink(path)
        else:
            host[shown] = "<dir>" if path.is_dir() else path.read_text(errors="replace")
    archive_path = work / output
    return Outcome(int((tmp_path / "rc.txt").read_text()), (tmp_path / "stderr.txt").read_text(),
                   _members(archive_path) if archive_path.is_file() else {},
                   host, sorted(os.listdir(scratch)))


def _members(archive: Path) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.isfile():
                handle = tar.extractfile(member)
                members[member.name] = handle.read() if handle else b""
            elif member.issym():
                members[member.name] = b"-> " + member.linkname.encode()
    return members


def image(tmp_path: Path) -> Path:
    """A small system image: what collectors read, nothing hostile yet."""
    root = tmp_path / "image"
    for directory in ("etc", "proc/sys/kernel", "proc/self", "sys/block", "sys/class/bdi"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    (root / "etc/fstab").write_text("/dev/sda1 / xfs defaults 0 0\n")
    (root / "proc/sys/kernel/hostname").write_text("image\n")
    (root / "proc/sys/kernel/osrelease").write_text("5.14.0-427.el9.x86_64\n")
    (root / "proc/mounts").write_text("/dev/sda1 / xfs rw 0 0\n")
    (root / "proc/cpuinfo").write_text("processor\t: 0\nflags\t\t: fpu\n\n")
    (root / "proc/meminfo").write_text("MemTotal:       16000000 kB\n")
    (root / "proc/self/mountinfo").write_text("1 0 8:1 / / rw - xfs /dev/sda1 rw\n")
    return root


def sas_tree(sasv9_cfg: str) -> str:
    """live_setup: a tmpfs /opt holding a SAS 9.4 installation whose sasv9.cfg the SAS
    account wrote."""
    base = "/opt/sas/SASHome/SASFoundation/9.4"
    return "\n".join([
        "mount -t tmpfs sascheck-opt /opt", f"mkdir -p {base}",
        f"printf '%s\\n' {shlex.quote(sasv9_cfg)} > {base}/sasv9.cfg",
    ])
