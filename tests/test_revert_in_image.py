"""An offline --revert acts inside the image by descriptor (issue 44): the bash fix's
IN_IMAGE helper reaches each directory one component at a time from the image's root,
resolving links inside the image, and removes or renames there by base name, so an image
that flips a directory for a link to the outside while the revert runs redirects nothing.
Run by bash as the fix runs it, and the helper by every Python RHEL ships that this machine
has (2.7 for RHEL 7, 3.6 for RHEL 8's platform-python, python3)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support.hosts import sas_host
from .test_root_writes import _bash, _fix_script, _hex

PYENV = Path.home() / ".pyenv/versions"
# RHEL 7's python 2.7, RHEL 8's platform-python 3.6: where this machine has them (pyenv)
OLD_PYTHONS = {"2.7": PYENV / "2.7.18/bin/python2.7", "3.6": PYENV / "3.6.15/bin/python3.6"}


def _settle(inside: Path, parked: Path) -> None:
    """The image's directory back in place, wherever the killed flipper left it."""
    if parked.exists():
        if inside.is_symlink():
            inside.unlink()
        parked.rename(inside)


@pytest.mark.stress
def test_a_revert_raced_by_the_image_removes_nothing_outside_it(tmp_path):
    """200 files the fix made in the image's /etc/sysctl.d, the same names outside; while
    --revert removes them, a process of the image's flips /etc/sysctl.d to a link to the
    outside directory as fast as it can (round 4 saw 2 of 200 outside files removed). The
    race must be met, not assumed: a file the revert left inside is one it found moved or
    linked, and up to five runs are made until one is."""
    root = sas_host(tmp_path / "root")
    script = _fix_script(tmp_path, root)
    inside, parked = root / "etc/sysctl.d", root / "etc/sysctl.d.parked"
    outside = tmp_path / "outside"
    inside.mkdir(exist_ok=True)
    outside.mkdir()
    names = [f"f{i}.conf" for i in range(200)]
    for name in names:
        (outside / name).write_text("precious\n")
    manifest = tmp_path / "fix.manifest"
    manifest.write_text("".join(f"new\t{_hex(str(inside / name))}\t\n" for name in names))
    met = []
    for _ in range(5):
        for name in names:
            (inside / name).write_text("made by the fix\n")
        flipper = subprocess.Popen([sys.executable, "-c", (
            "import os, sys\ninside, parked, outside = sys.argv[1:]\nwhile True:\n"
            "    os.rename(inside, parked); os.symlink(outside, inside)\n"
            "    os.unlink(inside); os.rename(parked, inside)\n"),
            str(inside), str(parked), str(outside)])
        try:
            ran = _bash(script, root, "--revert", str(manifest), cwd=tmp_path)
        finally:
            flipper.kill()
            flipper.wait()
            _settle(inside, parked)
        assert sorted(path.name for path in outside.iterdir()) == sorted(names)
        assert all((outside / name).read_text() == "precious\n" for name in names)
        assert "removed /" in ran.stdout + ran.stderr  # it did remove what it found inside
        met.append(sum(1 for path in inside.iterdir() if path.name in names))
        if met[-1]:
            break
    print(f"files the revert met moved or linked, per run: {met}")
    assert met[-1] > 0, f"the race was never met in {len(met)} runs: {met}"


def _in_image_helper(tmp_path: Path) -> str:
    """IN_IMAGE's Python source, as bash reads it from a generated fix."""
    script = _fix_script(tmp_path, sas_host(tmp_path / "host"))
    shown = subprocess.run(
        ["bash", "-c", 'eval "$(sed -n "/^read -r -d .. IN_IMAGE/,/^PYTHON$/p" "$1")"; '
         'printf %s "$IN_IMAGE"', "bash", str(script)],
        capture_output=True, text=True, check=True, timeout=60)
    assert "def enter(" in shown.stdout
    return shown.stdout


def _pythons() -> list[object]:
    found: list[object] = [pytest.param(sys.executable, id="python3")]
    for version, path in OLD_PYTHONS.items():
        found.append(pytest.param(str(path), id=f"python{version}", marks=pytest.mark.skipif(
            not path.exists(), reason=f"no python {version} here")))
    return found


@pytest.mark.parametrize("python", _pythons())
def test_each_change_is_made_inside_the_image_by_every_rhel_python(tmp_path, python):
    helper = _in_image_helper(tmp_path)
    image, outside = tmp_path / "image", tmp_path / "outside"
    (image / "etc/real").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim").write_text("precious\n")
    (image / "etc/new.conf").write_text("made by the fix\n")
    (image / "etc/grub.conf").write_text("changed by the fix\n")
    (image / "etc/.grub.conf.sascheck-1").write_text("the site's own\n")
    (image / "etc/empty").mkdir()
    (image / "etc/current").symlink_to("/etc/changed")
    (image / "etc/real/victim").write_text("the image's own\n")
    (image / "etc/alias").symlink_to("/etc/real")  # absolute: the image's /etc/real
    (image / "etc/up").symlink_to("../../../../../../outside")  # clamped at the image

    def change(op: str, path: str, datum: str = "", inside: bool = True) -> int:
        return subprocess.run([python, "-c", helper, op, str(image),
                               f"{image}{path}" if inside else path, datum],
                              capture_output=True, text=True, timeout=60).returncode
    assert change("remove-new", "/etc/new.conf") == 0
    assert change("remove-new", "/etc/new.conf") == 1  # a second run: nothing to do
    assert change("restore", "/etc/grub.conf", ".grub.conf.sascheck-1") == 0
    assert change("remove-dir", "/etc/empty") == 0
    assert change("relink", "/etc/current", "/etc/original") == 0
    assert change("remove-new", "/etc/alias/victim") == 0  # through the image's own link
    assert change("remove-new", "/etc/up/victim") == 1  # ../ never leaves the image
    assert change("remove-new", "/etc/../../outside/victim") == 1
    assert change("remove-new", f"/../{outside.name}/victim") == 1
    assert change("remove-new", str(outside / "victim"), inside=False) == 3  # not the image's
    assert (image / "etc/grub.conf").read_text() == "the site's own\n"
    assert not (image / "etc/.grub.conf.sascheck-1").exists()
    assert sorted(path.name for path in (image / "etc").iterdir()) == [
        "alias", "current", "grub.conf", "real", "up"]
    assert os.readlink(image / "etc/current") == "/etc/original"
    assert not (image / "etc/real/victim").exists()
    assert (outside / "victim").read_text() == "precious\n"


def test_an_offline_revert_without_a_python_refuses_and_changes_nothing(tmp_path):
    """A machine with no Python cannot act by descriptor from bash: the revert says so and
    leaves the image as it is, rather than fall back to paths."""
    root = sas_host(tmp_path / "root")
    script = _fix_script(tmp_path, root)
    made = root / "etc/sysctl.d/99-made.conf"
    made.parent.mkdir(exist_ok=True)
    made.write_text("made by the fix\n")
    manifest = tmp_path / "fix.manifest"
    manifest.write_text(f"new\t{_hex(str(made))}\t\n")
    tools = tmp_path / "bin"  # every command of this machine but a Python
    tools.mkdir()
    for directory in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        for name in os.listdir(directory) if os.path.isdir(directory) else []:
            if not name.startswith("python") and not (tools / name).exists():
                (tools / name).symlink_to(os.path.join(directory, name))
    ran = subprocess.run([shutil.which("bash") or "bash", str(script), "--revert",
                          str(manifest)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"PATH": str(tools), "SASCHECK_ROOT": str(root)})
    assert ran.returncode == 3, ran.stderr
    assert "needs a Python" in ran.stderr and made.exists()
