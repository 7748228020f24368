"""The distribution: one `sascheck` namespace, a working console script, current examples."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.example_roots import EXAMPLES

PROJECT = Path(__file__).resolve().parent.parent


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def _tree_differences(left: Path, right: Path) -> list[str]:
    """What differs between two trees; empty directories do not count (git drops them)."""
    differences: list[str] = []
    comparison = filecmp.dircmp(left, right)
    differences += [f"only in committed: {left / n}" for n in comparison.left_only
                    if not _is_empty_dir(left / n)]
    differences += [f"only in regenerated: {right / n}" for n in comparison.right_only
                    if not _is_empty_dir(right / n)]
    for name in comparison.common_files:
        a, b = left / name, right / name
        if a.is_symlink() or b.is_symlink():
            if not (a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)):
                differences.append(f"link differs: {a}")
        elif a.read_bytes() != b.read_bytes():
            differences.append(f"content differs: {a}")
    for name in comparison.common_dirs:
        if (left / name).is_symlink() or (right / name).is_symlink():
            if os.readlink(left / name) != os.readlink(right / name):
                differences.append(f"link differs: {left / name}")
            continue
        differences += _tree_differences(left / name, right / name)
    return differences


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_committed_example_roots_are_current(name, tmp_path):
    EXAMPLES[name](tmp_path / name)
    assert _tree_differences(PROJECT / "examples/roots" / name, tmp_path / name) == [], \
        "run scripts/make-example-roots"


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_scans(tmp_path):
    dist = tmp_path / "dist"
    # From a copy without build/: setuptools would otherwise reuse files a stale build left.
    source = tmp_path / "source"
    shutil.copytree(PROJECT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "test-artifacts",
        ".*_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist),
                    str(source)], check=True)
    wheel = next(dist.glob("sascheck-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([venv / "bin/pip", "install", "-q", str(wheel)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    ours = {p.name for p in site.iterdir() if not p.name.startswith(("_", "pip"))}
    assert {"scanner", "rules", "reports", "sascheck.py"} & ours == set()
    assert "sascheck" in ours
    shipped = {p.name for p in (site / "sascheck").rglob("*.py")}
    assert {"rootbuilder.py", "example_roots.py"} & shipped == set()  # test scaffolding
    assert (site / "sascheck/rules/sources.yml").exists()
    where = subprocess.run([venv / "bin/python", "-c",
                            "import pathlib, sascheck.scanner, sascheck.content; "
                            "ds = pathlib.Path(sascheck.content.__file__).with_name("
                            "'sascheck-ds.xml'); assert ds.stat().st_size > 10000, ds; "
                            "print(sascheck.scanner.__file__)"],
                           check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    assert where.startswith(str(venv))
    scan = subprocess.run([venv / "bin/sascheck", "scan", "--root",
                           str(PROJECT / "examples/roots/rhel8-tuned-sas"), "--set",
                           "sas_data_dirs=/sasdata", "--set", "sas_accounts=sas", "--json", "-",
                           "--quiet"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert scan.returncode == 0, scan.stderr
    result = json.loads(scan.stdout)
    # Every rule passes but the KVM host's two, which do not apply to this bare-metal host,
    # and the throughput rule, which only sascheck iotest judges.
    others = {r["id"]: r["result"] for r in result["rules"] if r["result"] != "pass"}
    assert others == {"thp_enabled_on_kvm_host": "notapplicable",
                      "kvm_guest_disks_direct": "notapplicable",
                      "sas_fs_throughput": "notchecked"}
    assert subprocess.run([venv / "bin/sascheck", "explain", "read_ahead"], capture_output=True,
                          text=True).stdout.count("Sources:") == 1


def test_every_package_of_the_tree_is_in_the_distribution():
    """A new subpackage left out of pyproject's list would be missing from the wheel and the
    RPM while an editable install still finds it."""
    import tomllib

    config = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = config["package-dir"]
    found = set()
    for package, folder in folders.items():
        for init in (PROJECT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(PROJECT / folder)
            found.add(".".join([package, *relative.parts]))
    assert found - set(config["packages"]) == set()  # (rules.profiles: data, no code)


def test_readme_catalogue_is_generated_from_the_rules():
    from sascheck.reports.catalogue import markdown_catalogue
    from sascheck.rules import load_catalogue

    readme = (PROJECT / "docs/catalogue.md").read_text()
    section = readme.split("<!-- catalogue:start -->\n", 1)[1].split("<!-- catalogue:end -->")[0]
    assert section == markdown_catalogue(load_catalogue()), "run scripts/update-readme"


def test_ci_runs_the_readme_test_command():
    readme = (PROJECT / "README.md").read_text()
    assert "\nscripts/test\n" in readme
    assert "exec scripts/test" in (PROJECT / ".ci/run").read_text()


def test_rule_stamp_is_current_and_the_catalogue_validates(tmp_path):
    import shutil
    import subprocess
    import sys

    from sascheck.rules import load_catalogue
    from sascheck.rules.loader import (
        CACHE_FILE,
        RULES_DIR,
        STAMP_FILE,
        cache_documents,
        catalogue_digest,
    )

    assert (RULES_DIR / STAMP_FILE).read_text().strip() == catalogue_digest(RULES_DIR), \
        "run scripts/update-rule-stamp"
    assert (RULES_DIR / CACHE_FILE).read_text() == cache_documents(RULES_DIR), \
        "run scripts/update-rule-stamp"
    copy = tmp_path / "rules"
    shutil.copytree(RULES_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__",
                                                                     STAMP_FILE, CACHE_FILE))
    parsed = load_catalogue(copy)  # the full JSON Schema pass, from the YAML
    cached = load_catalogue()
    assert len(parsed.rules) == len(list(RULES_DIR.glob("*.yml"))) - 2  # sources, variables
    for rule_id, rule in cached.rules.items():  # the cache holds the same documents
        assert dataclasses.replace(parsed.rules[rule_id], source=rule.source) == rule
    assert {n: (p.rule_ids, p.values) for n, p in parsed.profiles.items()} == \
        {n: (p.rule_ids, p.values) for n, p in cached.profiles.items()}
    assert parsed.variables == cached.variables and parsed.sources == cached.sources
    assert list(parsed.variables) == list(cached.variables)  # the order reports show
    probe = subprocess.run([sys.executable, "-c", "import sys; from sascheck.rules import "
                            "load_catalogue; load_catalogue(); "
                            "print('jsonschema' in sys.modules, 'yaml' in sys.modules)"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "False False"  # stamped: no schema pass, no YAML parser


def test_scale_benchmark_script_runs(tmp_path):
    import subprocess
    import sys

    completed = subprocess.run([sys.executable, str(PROJECT / "scripts/bench-scale"), "40:4",
                                "--runs", "1", "--workdir", str(tmp_path)],
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    row = completed.stdout.splitlines()[-1].split()
    assert row[:2] == ["40", "4"] and float(row[2]) > 0


COMPLETION_CASES = [("sascheck explain thp_d", {"thp_defrag_disabled", "thp_disabled",
                                                 "thp_disabled_at_boot"}),
                    ("sascheck report --failing tuned_p", {"tuned_profile"}),
                    ("sascheck scan --profile xt", {"xtremio"}),
                    ("sascheck fix --set storage_c", {"storage_cache_protected="})]


def test_bash_completion_completes_rule_ids_profiles_and_site_values(tmp_path):
    """Issue 48: the completion scripts/build-docs writes (the RPM's) completes what the
    catalogue names, run in a real bash as bash-completion calls it."""
    project = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, str(project / "scripts/build-docs"), str(tmp_path)],
                   check=True, timeout=120)
    for line, expected in COMPLETION_CASES:
        script = (f"source {tmp_path}/sascheck.bash-completion\n"
                  f"read -r -a COMP_WORDS <<< '{line}'; COMP_CWORD=$((${{#COMP_WORDS[@]}}-1))\n"
                  f"COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n"
                  "_shtab_sascheck; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
        assert set(done.stdout.split()) == expected, (line, done.stdout, done.stderr)
