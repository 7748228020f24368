"""Host data is never code, round 2 (issue 21): writes as root where they must not go.

Each test performs the attack against the real consumer (the kernel's link semantics on a
real block device, bash running the fix, fio) and shows it inert; races run a racer thread
for a bounded time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from sascheck.cli import main
from sascheck.iotest.fio import FioJob

from .support.fix_hosts import verdicts
from .support.hosts import BASELINE_SETS, SasFs, sas_host
from .support.lab import make_fs, prerequisites_missing
from .support.remedy import generate


def _scan_to(root: Path, *outputs: str) -> int:
    return main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
                 *outputs])


@pytest.mark.skipif(prerequisites_missing() is not None, reason="needs root and losetup")
@pytest.mark.parametrize("option", ["--json", "--html", "--junit", "--prometheus"])
def test_a_link_to_a_block_device_is_not_written(tmp_path, option, capsys):
    """A link at an output's name pointing to a block device: the device's bytes stay."""
    backing = tmp_path / "disk.img"
    backing.write_bytes(b"\x5a" * (1024 * 1024))
    root = sas_host(tmp_path / "root")
    with ExitStack() as stack:
        device = subprocess.run(["losetup", "--find", "--show", str(backing)], check=True,
                                capture_output=True, text=True).stdout.strip()
        stack.callback(subprocess.run, ["losetup", "-d", device], check=False)
        link = tmp_path / "out"
        link.symlink_to(device)
        assert _scan_to(root, option, str(link)) == 1
        with open(device, "rb") as disk:
            assert disk.read(4096) == b"\x5a" * 4096
    assert "symbolic link" in capsys.readouterr().err


def test_fix_output_never_has_its_mode_set_by_name(tmp_path, monkeypatch):
    """`fix -o` used to chmod the name after the rename: a racer in the output directory who
    renamed a root-only file over the name in between got it made 0755. The racer here wins
    at the worst moment every time (right after sascheck's rename); the file keeps 0600."""
    root = sas_host(tmp_path / "root", thp_enabled="always")
    output = tmp_path / "fix.sh"
    secret = tmp_path / "secret"
    real_replace = os.replace

    def replace_then_race(source, destination, *args, **kwargs):
        real_replace(source, destination, *args, **kwargs)
        if str(destination) == str(output):
            secret.write_text("root only\n")
            secret.chmod(0o600)
            real_replace(secret, output)

    monkeypatch.setattr(os, "replace", replace_then_race)
    assert main(["fix", "--root", str(root), "--set", "sas_data_dirs=/sasdata",
                 "--format", "bash", "-o", str(output)]) == 0
    assert output.read_text() == "root only\n"
    assert output.stat().st_mode & 0o777 == 0o600


def test_the_fix_script_is_executable_from_its_first_moment(tmp_path):
    root = sas_host(tmp_path / "root", thp_enabled="always")
    output = tmp_path / "fix.sh"
    assert main(["fix", "--root", str(root), "--set", "sas_data_dirs=/sasdata",
                 "--format", "bash", "-o", str(output)]) == 0
    assert output.stat().st_mode & 0o777 == 0o755
    assert output.read_text().startswith("#!/usr/bin/env bash")


# -- iotest: fio runs as root in directories others may write --------------------------------
lab_only = pytest.mark.skipif(prerequisites_missing() is not None and not os.environ.get("CI"),
                              reason=prerequisites_missing() or "")
SASCHECK = [sys.executable, "-m", "sascheck"]


def _iotest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SASCHECK, "iotest", "--quiet", *args], capture_output=True,
                          text=True, timeout=600)


def _secret(base: Path) -> Path:
    secret = base / "root-only"
    secret.write_text("root's own\n")
    secret.chmod(0o600)
    return secret


@lab_only
@pytest.mark.live
def test_iotest_writes_nothing_through_a_colon_in_the_directory(tmp_path):
    """fio splits --directory at ':'; a SAS directory "<fs>/v:<fs>/link" made the old run
    write <fs>/v/sascheck.0.0, a planted link to a root-only file."""
    with ExitStack() as stack:
        fs = make_fs(stack, tmp_path, "sasdata", "xfs", "noatime", 300)
        secret = _secret(tmp_path)
        (fs.mountpoint / "v").mkdir()
        (fs.mountpoint / "v" / "sascheck.0.0").symlink_to(secret)
        hostile = Path(f"{fs.mountpoint}/v:{fs.mountpoint}/link")
        hostile.mkdir(parents=True)
        done = _iotest("--dir", str(hostile), "--size", "4M", "--jobs", "1")
        assert done.returncode in (0, 2), done.stderr
        assert secret.read_text() == "root's own\n"
        assert sorted(os.listdir(hostile)) == []  # the test's own files are gone too
        # The command recorded for reproduction escapes the colon as fio reads it: a bare
        # fio run of it writes inside the hostile directory, not through the link.
        job = FioJob(str(hostile), "write", 65536, 65536, 1)
        subprocess.run(job.argv(), check=True, capture_output=True)
        assert secret.read_text() == "root's own\n"
        assert [p.stat().st_size for p in hostile.iterdir()] == [65536]


@lab_only
@pytest.mark.live
def test_iotest_private_directory_cannot_be_swapped(tmp_path):
    """A racer renames the private directory away and plants one of its own whose
    sascheck.0.0 links to a root-only file (the directory is group-writable, as shared SAS
    areas are). fio runs in the directory sascheck made, by descriptor: the secret stays,
    and the run says its directory was replaced instead of reporting figures."""
    with ExitStack() as stack:
        fs = make_fs(stack, tmp_path, "saswork", "xfs", "noatime", 300)
        fs.mountpoint.chmod(0o775)
        secret = _secret(tmp_path)
        stop = threading.Event()
        swaps = []

        def racer() -> None:
            deadline = time.monotonic() + 120
            while not stop.is_set() and time.monotonic() < deadline:
                for entry in fs.mountpoint.glob(".sascheck-iotest-*"):
                    if (entry / "planted").exists():
                        continue
                    try:
                        entry.rename(fs.mountpoint / f"moved-{len(swaps)}")
                        entry.mkdir()
                        (entry / "planted").touch()
                        (entry / "sascheck.0.0").symlink_to(secret)
                        swaps.append(entry.name)
                    except OSError:
                        pass

        thread = threading.Thread(target=racer)
        thread.start()
        try:
            done = _iotest("--dir", str(fs.mountpoint), "--size", "8M", "--jobs", "1")
        finally:
            stop.set()
            thread.join()
        assert swaps, "the racer never saw the private directory"
        assert secret.read_text() == "root's own\n"
        assert done.returncode == 1 and "was replaced or changed" in done.stderr, done.stderr
        # The racer's directory is left as it was; sascheck removed only its own files.
        assert all(not list((fs.mountpoint / f"moved-{n}").iterdir()) for n in range(len(swaps)))


@lab_only
@pytest.mark.live
def test_iotest_refuses_shared_directories_and_memory(tmp_path):
    with ExitStack() as stack:
        fs = make_fs(stack, tmp_path, "open", "ext4", "noatime", 64)
        fs.mountpoint.chmod(0o777)
        done = _iotest("--dir", str(fs.mountpoint), "--size", "1M")
        assert done.returncode == 1 and "without the sticky bit" in done.stderr, done.stderr
        fs.mountpoint.chmod(0o1777)
        assert _iotest("--dir", str(fs.mountpoint), "--size", "1M", "--dry-run").returncode == 0
    link = tmp_path / "devlink"
    link.symlink_to("/dev")
    done = _iotest("--dir", str(link), "--size", "1M", "--dry-run")
    assert done.returncode == 1 and "devtmpfs" in done.stderr and "not a disk" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# --- offline fixes and their revert -------------------------------------------------------

def _hex(text: str) -> str:
    return text.encode().hex()


def _fix_script(tmp_path: Path, root: Path) -> Path:
    return generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)


def _bash(script: Path, root: Path | None, *args: str, cwd: Path,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SASCHECK_MANIFEST"}
    environment.update(env or {})
    if root is not None:
        environment["SASCHECK_ROOT"] = str(root)
    return subprocess.run(["bash", str(script), *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def test_an_offline_fix_creates_its_manifest_under_a_name_no_one_could_plant(tmp_path):
    """Links planted at every name the manifest could have had by its time stamp (this
    second and the next five minutes, with and without an extension) point to a file
    outside the image: the fix creates a new, randomly named manifest instead, and the
    outside file is untouched; that manifest reverts the fix."""
    root = sas_host(tmp_path / "root", dirty_ratio=20, defrag_tmpfiles=False)
    script = _fix_script(tmp_path, root)
    work = tmp_path / "work"
    work.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    now = time.time()
    for offset in range(0, 300):
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now + offset))
        for name in (f"sascheck-fix-{stamp}.manifest", f"sascheck-fix-{stamp[:12]}.manifest"):
            if not (work / name).is_symlink():
                (work / name).symlink_to(victim)
    ran = _bash(script, root, cwd=work)
    assert ran.returncode == 0, ran.stderr
    assert victim.read_text() == "keep me\n"
    made = [path for path in work.iterdir() if not path.is_symlink()]
    assert len(made) == 1 and made[0].is_file(), made
    assert made[0].name.startswith("sascheck-fix-") and made[0].name.endswith(".manifest")
    assert made[0].stat().st_mode & 0o077 == 0  # mktemp: the owner's alone
    undone = _bash(script, root, "--revert", str(made[0]), cwd=work)
    assert "changes reverted" in undone.stdout, undone.stdout + undone.stderr


def test_a_named_manifest_that_is_a_link_is_not_written_through(tmp_path):
    root = sas_host(tmp_path / "root", dirty_ratio=20, defrag_tmpfiles=False)
    script = _fix_script(tmp_path, root)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (tmp_path / "named.manifest").symlink_to(victim)
    ran = _bash(script, root, cwd=tmp_path,
                env={"SASCHECK_MANIFEST": str(tmp_path / "named.manifest")})
    assert victim.read_text() == "keep me\n"
    assert "--revert will not know this run's changes" in ran.stderr


def test_revert_lists_recorded_commands_and_restores_runtime_only_under_proc_sys(tmp_path):
    """A `command` line has an empty path field; it must reach the list of what to undo by
    hand. A `runtime` line naming a file elsewhere is refused even live (ROOT unset)."""
    root = sas_host(tmp_path / "root")
    script = _fix_script(tmp_path, root)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    manifest = tmp_path / "fix.manifest"
    manifest.write_text(f"command\t\t{_hex('grubby --update-kernel=ALL --args=x')}\n"
                        f"runtime\t{_hex(str(victim))}\t{_hex('owned')}\n")
    ran = _bash(script, None, "--revert", str(manifest), cwd=tmp_path)
    assert ("manual: the fix ran 'grubby --update-kernel=ALL --args=x', which has no known "
            "inverse") in ran.stderr
    assert "outside /proc/sys and /sys" in ran.stderr
    assert victim.read_text() == "keep me\n"


def test_the_bash_fix_reads_mount_points_as_the_scanner_does(tmp_path):
    """SAS DATA given as /sasdata/ and a mount point the kernel escaped as \\400 (not an
    octal byte; the kernel escapes only space, tab, newline and backslash): the fix adds
    noatime to /sasdata's fstab line and leaves / alone, and the scanner then agrees."""
    root = sas_host(tmp_path / "root",
                    filesystems=[SasFs("sasdata", "/sasdata", options="rw,relatime"),
                                 SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")])
    mounts = root / "proc/mounts"
    mounts.write_text(mounts.read_text() + "/dev/sdz /sasdata\\400 xfs rw,noatime 0 0\n")
    fstab = root / "etc/fstab"
    root_line = next(line for line in fstab.read_text().splitlines() if line.split()[1:2] == ["/"])
    sets = ["sas_data_dirs=/sasdata/"]
    script = generate("bash", tmp_path / "fix.sh", root, sets)
    ran = _bash(script, root, cwd=tmp_path, env={"SASCHECK_MANIFEST": str(tmp_path / "m")})
    assert ran.returncode == 0, ran.stderr
    lines = fstab.read_text().splitlines()
    assert root_line in lines
    data = next(line for line in lines if line.split()[1:2] == ["/sasdata"])
    assert "noatime" in data.split()[3]
    assert verdicts(root, sets)["mount_options_at_boot"] == "pass"


def test_a_slaves_cycle_in_an_image_does_not_hang_the_fix(tmp_path):
    """dm-1 (the multipath map below the SAS LV dm-2) lists itself and dm-2 among its
    slaves: the scanner cuts the loop, and so does the bash fix (it used to recurse for
    ever)."""
    root = sas_host(tmp_path / "root", tuned_active="balanced", read_ahead_kb=128)
    slaves = root / "sys/devices/virtual/block/dm-1/slaves"
    (slaves / "self").symlink_to("../../dm-1")
    (slaves / "dm-2").symlink_to("../../dm-2")
    script = _fix_script(tmp_path, root)
    ran = _bash(script, root, cwd=tmp_path, env={"SASCHECK_MANIFEST": str(tmp_path / "m")})
    assert ran.returncode == 0, ran.stderr
    rules = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    assert "read_ahead_kb" in rules


def test_iotest_refuses_a_directory_swapped_for_a_link_to_another_file_system(tmp_path):
    """Issue 34: after the plan, a member of the SAS group swaps the SAS directory for a link
    to another mounted file system (here /dev/shm's tmpfs). The private directory would be
    made there and fio's figures reported for the planned file system: it is refused."""
    from sascheck.iotest.plan import targets
    from sascheck.iotest.runner import FioError, PrivateDirectory

    elsewhere = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        saswork = tmp_path / "saswork"
        saswork.mkdir()
        [target] = targets([("WORK", str(saswork))], [])
        assert os.stat(elsewhere).st_dev != target.st_dev
        saswork.rename(tmp_path / "moved")
        saswork.symlink_to(elsewhere)
        with pytest.raises(FioError, match="not on the file system planned"):
            PrivateDirectory(target.directory, target.st_dev)
        assert list(elsewhere.iterdir()) == []  # nothing left there
        PrivateDirectory(str(tmp_path / "moved"), target.st_dev).close()  # the real one is fine
    finally:
        shutil.rmtree(elsewhere)


def test_iotest_plans_the_file_system_of_the_directory_it_opened(tmp_path):
    """Issue 44: the plan resolved the SAS directory's path, then stat'ed it by name, then
    looked its mount up by the name: a racer flipping the directory for a link to another
    file system (/dev/shm here, a loop file system in the report) got the plan to name
    one file system (/) while its device was the other's, and fio wrote there. Planned from
    one opening of the directory, every plan names the file system of the device it
    holds, or is refused; measured against a second process flipping as fast as it can."""
    from sascheck.iotest.plan import PlanError, targets
    from sascheck.scanner.parsers.mounts import parse_mounts

    other = Path(tempfile.mkdtemp(dir="/dev/shm"))
    saswork = tmp_path / "saswork"
    saswork.mkdir()
    mounts, _ = parse_mounts(Path("/proc/mounts").read_text())

    def plan() -> str | None:
        try:
            [target] = targets([("WORK", str(saswork))], mounts)
        except PlanError:
            return None
        consistent = os.stat(target.mountpoint).st_dev == target.st_dev
        return f"{target.mountpoint} {'consistent' if consistent else 'WRONG'}"

    # What each of the racer's states plans when nothing races: a machine whose /tmp is
    # refused (an overlay root) has one plannable state, not two.
    saswork.rename(tmp_path / "parked")
    saswork.symlink_to(other)
    expected = {plan()}
    saswork.unlink()
    (tmp_path / "parked").rename(saswork)
    expected = {plan(), *expected} - {None}
    assert "/dev/shm consistent" in expected, expected  # the racer's other file system
    flipper = subprocess.Popen([sys.executable, "-c", (
        "import os, sys\n"
        "directory, parked, other = sys.argv[1:]\n"
        "while True:\n"
        "    os.rename(directory, parked); os.symlink(other, directory)\n"
        "    os.unlink(directory); os.rename(parked, directory)\n"),
        str(saswork), str(tmp_path / "parked"), str(other)])
    planned: set[str] = set()
    try:
        # Until both states were planned (a busy machine only makes this take longer)
        deadline, tries = time.monotonic() + 120, 0
        while (tries < 3000 or planned != expected) and time.monotonic() < deadline:
            tries += 1
            state = plan()
            if state is not None:
                planned.add(state)
    finally:
        flipper.kill()
        flipper.wait()
        shutil.rmtree(other)
    assert not [state for state in planned if state.endswith("WRONG")], planned
    assert planned == expected, planned  # each of the racer's states was planned, rightly
