"""The RPMs (issue 25): scripts/build-rpms builds sascheck and sascheck-content with the real
rpmbuild (Debian's rpm package); their files, metadata and rpmlint; the content package
installed into a scratch root with rpm and its data stream evaluated there by oscap; the
command line from the sascheck package run as installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support.oscap import DATASTREAM, oscap_available, oscap_eval, tailor

PROJECT = Path(__file__).resolve().parent.parent
CONTENT_DS = "/usr/share/xml/scap/sascheck/content/sascheck-ds.xml"
pytestmark = pytest.mark.skipif(shutil.which("rpmbuild") is None, reason="rpmbuild missing")


def _rpm(*arguments: str) -> str:
    return subprocess.run(["rpm", *arguments], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def rpms(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("rpms")
    completed = subprocess.run([str(PROJECT / "scripts/build-rpms"), str(out)],
                               capture_output=True, text=True, timeout=600,
                               env={**os.environ, "PYTHON": sys.executable})
    assert completed.returncode == 0, completed.stderr[-3000:]
    found = {path.name: path for path in out.glob("*.rpm")}
    return {"cli": next(p for n, p in found.items() if re.fullmatch(r"sascheck-\d.*x86_64\.rpm", n)),
            "content": next(p for n, p in found.items() if n.startswith("sascheck-content-")),
            "source": next(p for n, p in found.items() if n.endswith(".src.rpm"))}


def test_content_package_holds_the_stream_collect_sh_and_playbook_and_no_python(rpms):
    files = set(_rpm("-qlp", str(rpms["content"])).split())
    assert {CONTENT_DS, "/usr/share/sascheck/collect.sh", "/usr/share/sascheck/fleet-scan.yml",
            "/usr/lib/systemd/system/sascheck-oscap.service",
            "/usr/lib/systemd/system/sascheck-oscap.timer"} <= files
    assert not [name for name in files if name.endswith(".py")]
    requires = _rpm("-qRp", str(rpms["content"]))
    assert "python" not in requires
    info = _rpm("-qip", str(rpms["content"]))
    assert re.search(r"^Architecture: noarch$", info, re.M)


BUNDLED = "/usr/lib64/sascheck"  # %{_libdir}/sascheck: arch-specific, private
# What the command-line package may require (issue 37): RHEL's python3.11, the shell its
# scriptlets run in, systemd for them, its content package; rpm's own rpmlib() features and
# the config() mark of its %config file.
ALLOWED_REQUIRES = re.compile(r"python3\.11|/bin/sh|systemd|sascheck-content = \S+|"
                              r"config\(sascheck\) = \S+|rpmlib\(.*")


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_cli_package_bundles_what_rhel_lacks_and_requires_only_rhel(rpms):
    files = set(_rpm("-qlp", str(rpms["cli"])).split())
    site = f"{BUNDLED}/sascheck"
    shipped = {name[len(site) + 1:] for name in files if name.startswith(site + "/")}
    folders = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    for package, folder in folders.items():
        prefix = package.removeprefix("sascheck").lstrip(".").replace(".", "/")
        for module in (PROJECT / folder).rglob("*.py"):
            name = str(Path(prefix) / module.relative_to(PROJECT / folder))
            assert name in shipped, name
    assert {"/usr/bin/sascheck", "/usr/lib/systemd/system/sascheck.service",
            "/usr/share/man/man1/sascheck.1", "/etc/sysconfig/sascheck",
            "/usr/share/bash-completion/completions/sascheck"} <= files
    assert not [name for name in files if "site-packages" in name or "/.build-id/" in name]
    requires = set(_rpm("-qRp", str(rpms["cli"])).splitlines())
    assert {"python3.11", "systemd"} <= requires
    assert [r for r in requires if not ALLOWED_REQUIRES.fullmatch(r)] == []
    provides = _rpm("-qp", "--provides", str(rpms["cli"]))
    bundled = dict(re.findall(r"^bundled\(python3dist\(([^)]+)\)\) = (\S+)$", provides, re.M))
    for dependency in tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"][
            "dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", dependency).group(0)
        assert _normalised(name) in bundled, dependency
    # Every wheel installed in the package is declared, at the version installed.
    for info in (name for name in files if name.endswith(".dist-info")
                 and name.startswith(BUNDLED + "/") and "/sascheck-" not in name):
        wheel, version = Path(info).name[:-len(".dist-info")].rsplit("-", 1)
        assert bundled.get(_normalised(wheel)) == version, info
    info = _rpm("-qip", str(rpms["cli"]))
    assert re.search(r"^Architecture: x86_64$", info, re.M)  # compiled wheels (lxml, re2)


def test_cli_package_scriptlets_and_config_are_rhels(rpms):
    scripts = _rpm("-qp", "--scripts", str(rpms["cli"]))
    assert "systemctl --no-reload preset sascheck.timer" in scripts
    assert "disable --now sascheck.timer sascheck.service" in scripts
    assert "try-restart sascheck.timer" in scripts
    flags = dict(line.rsplit(" ", 1) for line in _rpm(
        "-qp", "--qf", "[%{FILENAMES} %{FILEFLAGS:fflags}\n]", str(rpms["cli"])).splitlines()
        if " " in line)
    assert flags["/etc/sysconfig/sascheck"] == "cn"  # %config(noreplace)
    service = subprocess.run(["rpm2cpio", str(rpms["cli"])], check=True, capture_output=True)
    assert b"StateDirectory=sascheck sascheck/metrics sascheck/previous" in service.stdout
    assert b"/usr/share/sascheck-report" not in service.stdout


def test_rpmlint_finds_no_error(rpms):
    if shutil.which("rpmlint") is None:
        pytest.skip("rpmlint missing")
    lint = subprocess.run(["rpmlint", "-r", str(PROJECT / "packaging/sascheck.rpmlintrc"),
                           *(str(path) for path in rpms.values())],
                          capture_output=True, text=True, timeout=300)
    assert " 0 errors" in lint.stdout, lint.stdout


def _install(rpm: Path, root: Path) -> None:
    _rpm("--root", str(root), "--initdb")
    _rpm("--root", str(root), "--nodeps", "--noscripts", "-i", str(rpm))


@pytest.mark.skipif(os.geteuid() != 0, reason="rpm -i into a root needs root")
@pytest.mark.skipif(not oscap_available(), reason="oscap is not installed")
def test_installed_content_validates_and_oscap_evaluates_it(rpms, tmp_path):
    _install(rpms["content"], tmp_path / "installed")
    installed = tmp_path / "installed" / CONTENT_DS.lstrip("/")
    assert installed.read_bytes() == DATASTREAM.read_bytes()
    assert "sascheck-content" in _rpm("--root", str(tmp_path / "installed"), "-qa")
    valid = subprocess.run(["oscap", "ds", "sds-validate", str(installed)],
                           capture_output=True, text=True, timeout=300)
    assert valid.returncode == 0, valid.stderr
    info = subprocess.run(["oscap", "info", "--profile",
                           "xccdf_org.sascheck.content_profile_default", str(installed)],
                          capture_output=True, text=True, timeout=60).stdout
    assert "Title: SAS on RHEL" in info and "Description: " in info  # as Satellite lists it
    EXAMPLES["rhel8-tuned-sas"](tmp_path / "host")
    tailoring = tailor(tmp_path / "host", EXAMPLE_VALUES["rhel8-tuned-sas"],
                       tmp_path / "tailoring.xml")
    results = oscap_eval(tmp_path / "host", tailoring, tmp_path, datastream=installed)
    assert results["read_ahead"] == "pass" and results["sas_fs_noatime"] == "pass"


SYSTEM_PYTHON = "/usr/bin/python3.11"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="a private mount namespace needs root and unshare")
@pytest.mark.skipif(not os.path.exists(SYSTEM_PYTHON), reason="no /usr/bin/python3.11")
def test_installed_command_line_runs_on_a_bare_python311(rpms, tmp_path):
    """Issue 37: the package installed into a scratch root, its /usr laid over this
    machine's in a private mount namespace (overlayfs: its files at their own paths, the
    machine's python3.11, which has none of sascheck's dependencies), then its
    /usr/bin/sascheck run as a person would: a scan, the manual page, the completion."""
    root = tmp_path / "installed"
    _install(rpms["content"], root)
    _install(rpms["cli"], root)
    launcher = (root / "usr/bin/sascheck").read_text()
    assert launcher.startswith(f"#!{SYSTEM_PYTHON} -IS\n")
    bare = subprocess.run([SYSTEM_PYTHON, "-IS", "-c", "import lxml"], capture_output=True)
    assert bare.returncode != 0  # the interpreter alone lacks the dependencies
    EXAMPLES["rhel8-tuned-sas"](tmp_path / "host")
    sets = " ".join(f"--set={v}" for v in EXAMPLE_VALUES["rhel8-tuned-sas"])
    script = f"""set -e
mount -t overlay overlay -o lowerdir={root}/usr:/usr /usr
cd {tmp_path}
/usr/bin/sascheck scan --root {tmp_path}/host --json scan.json --quiet {sets} || [ $? = 2 ]
{SYSTEM_PYTHON} -IS -c 'import sys; sys.path.insert(0, "{BUNDLED}"); import lxml, re2, yaml
print(lxml.__file__, re2.__file__, yaml.__file__)' > where.txt
/usr/bin/sascheck --help > help.txt
MANWIDTH=80 man -l /usr/share/man/man1/sascheck.1 > man.txt 2>/dev/null
bash -c 'source /usr/share/bash-completion/completions/sascheck
COMP_WORDS=(sascheck sc); COMP_CWORD=1; COMP_LINE="sascheck sc"; COMP_POINT=11
_shtab_sascheck; printf "%s\\n" "${{COMPREPLY[@]}}"' > completed.txt
"""
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "scan.json").read_text())
    assert {r["id"]: r["result"] for r in result["rules"]}["read_ahead"] == "pass"
    assert all(path.startswith(BUNDLED + "/")
               for path in (tmp_path / "where.txt").read_text().split())
    assert "exit status:" in (tmp_path / "help.txt").read_text()
    manual = (tmp_path / "man.txt").read_text()
    assert "SASCHECK(1)" in manual and "sascheck scan" in manual and "--snapshot" in manual
    assert set((tmp_path / "completed.txt").read_text().split()) == {"scan", "scan-snapshots"}


def test_the_source_package_holds_what_git_tracks_and_nothing_else(rpms, tmp_path):
    """Issue 37: Source0 is git archive of the commit, so a report the README's first
    command left in the tree (its host name, kernel, mounts) never ships."""
    sources = tmp_path / "srpm"
    sources.mkdir()
    cpio = subprocess.run(["rpm2cpio", str(rpms["source"])], check=True, capture_output=True)
    subprocess.run(["cpio", "-idm", "--quiet"], input=cpio.stdout, cwd=sources, check=True)
    tarball = next(sources.glob("sascheck-*.tar.gz"))
    listed = subprocess.run(["tar", "-tzf", str(tarball)], check=True, capture_output=True,
                            text=True).stdout.split()
    shipped = {name.split("/", 1)[1] for name in listed if "/" in name and not name.endswith("/")}
    tracked = set(subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=PROJECT,
                                 check=True, capture_output=True, text=True).stdout.split())
    assert shipped == tracked
    assert not any(name.startswith("sascheck-report") for name in shipped)


@pytest.mark.parametrize("package", ["cli", "content"])
def test_nothing_installed_is_writable_but_by_root(rpms, package):
    """Issue 44: the bundled wheels, the launcher, the units and /etc/sysconfig/sascheck (read
    by systemd as KEY=value data, never sourced by a shell) are root's alone, as rpm
    records them: a file any other user could change would run as root on the next scan."""
    listed = _rpm("-qp", "--qf", "[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} "
                  "%{FILENAMES}\n]", str(rpms[package])).splitlines()
    assert len(listed) > 3
    for line in listed:
        perms, user, group, _name = line.split(" ", 3)
        assert (user, group) == ("root", "root"), line
        assert perms[5] != "w" and perms[8] != "w", line  # group, other
