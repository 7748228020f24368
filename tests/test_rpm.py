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

from tests.example_roots import EXAMPLE_VALUES, EXAMPLES

from .oscap import DATASTREAM, oscap_available, oscap_eval, tailor

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
    return {"cli": next(p for n, p in found.items() if re.fullmatch(r"sascheck-\d.*noarch\.rpm", n)),
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


def test_cli_package_requires_each_python_dependency_and_ships_every_module(rpms):
    files = set(_rpm("-qlp", str(rpms["cli"])).split())
    site = next(name for name in files if name.endswith("/site-packages/sascheck"))
    shipped = {name[len(site) + 1:] for name in files if name.startswith(site + "/")}
    folders = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    for package, folder in folders.items():
        prefix = package.removeprefix("sascheck").lstrip(".").replace(".", "/")
        for module in (PROJECT / folder).rglob("*.py"):
            name = str(Path(prefix) / module.relative_to(PROJECT / folder))
            assert name in shipped, name
    assert "/usr/bin/sascheck" in files and "/usr/lib/systemd/system/sascheck.service" in files
    requires = _rpm("-qRp", str(rpms["cli"]))
    dependencies = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"][
        "dependencies"]
    for dependency in dependencies:
        name, minimum = re.fullmatch(r"([A-Za-z0-9_.-]+)>=(\S+)", dependency).groups()
        assert f"python3dist({name.lower()}) >= {minimum}" in requires, dependency
    assert f"python(abi) = {sys.version_info[0]}.{sys.version_info[1]}" in requires
    assert "sascheck-content = " in requires


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


@pytest.mark.skipif(os.geteuid() != 0, reason="rpm -i into a root needs root")
def test_installed_command_line_scans(rpms, tmp_path):
    root = tmp_path / "installed"
    _install(rpms["content"], root)
    _install(rpms["cli"], root)
    launcher = (root / "usr/bin/sascheck").read_text()
    assert launcher.startswith(f"#!/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}\n")
    site = next(root.glob("usr/lib/python3*/site-packages"))
    EXAMPLES["rhel8-tuned-sas"](tmp_path / "host")
    # The RPM's own code (not this checkout's): its dependencies from the test environment.
    scan = subprocess.run([sys.executable, "-I", "-c",
                           f"import sys; sys.path[:0] = [{str(site)!r}, "
                           f"*{[p for p in sys.path if 'site-packages' in p]!r}]; "
                           f"sys.argv[0] = 'sascheck'; exec(open({str(root / 'usr/bin/sascheck')!r}).read())",
                           "scan", "--root", str(tmp_path / "host"), "--json", "-", "--quiet",
                           *[f"--set={v}" for v in EXAMPLE_VALUES["rhel8-tuned-sas"]]],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert scan.returncode in (0, 2), scan.stderr
    result = json.loads(scan.stdout)
    assert {r["id"]: r["result"] for r in result["rules"]}["read_ahead"] == "pass"
    where = subprocess.run([sys.executable, "-I", "-c",
                            f"import sys; sys.path[:0] = [{str(site)!r}]; "
                            "import sascheck.content.checks as c; print(c.__file__)"],
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(site)), where.stderr


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
