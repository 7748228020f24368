"""Issue 64: tuned's [sysctl] ">N" and "<N" as tuned applies them. Stock throughput-performance
carries "net.core.somaxconn=>2048" (tuned 2.20 on; tests/data/tuned-2.27, the release's own
file). _process_assignment_modifiers (tuned/plugins/base.py, v2.22.1 lines 466-489), called
by plugin_sysctl.py's _instance_apply_static (lines 67-80) with the value the key has when
tuned starts, writes N only above it (">") or below it ("<"): RHEL 8 gets 2048 and RHEL 9
keeps its 4096. sysctl modifiers exist from tuned 2.10 (commit 90c371f); before, ">2048" is
written as it is and the kernel refuses it. The fix writes a minimum as ">N" too, so a host
that boots with more keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support.boot_samples import tuned_version_file
from .support.hosts import BASELINE_SETS, sas_host
from .support.oscap import oscap_available, oscap_eval, tailor
from .support.remedy import generate, profile_sysctl, run_bash

RULE = "somaxconn_at_boot"
DATA = Path(__file__).parent / "data"
THROUGHPUT = (DATA / "tuned-2.27/throughput-performance/tuned.conf").read_text()
RHEL9 = ("5.14.0-427.13.1.el9_4.x86_64", "Red Hat Enterprise Linux 9.4 (Plow)")
RHEL8 = ("4.18.0-513.el8.x86_64", "Red Hat Enterprise Linux 8.9 (Ootpa)")
RHEL7 = ("3.10.0-1160.el7.x86_64", "Red Hat Enterprise Linux Server 7.9 (Maipo)")


def _host(path: Path, release: tuple[str, str], tuned: tuple[int, int, int]) -> Path:
    kernel, pretty = release
    return sas_host(path, kernel=kernel, pretty_name=pretty,
                    tuned_active="throughput-performance",
                    tuned_shipped={"throughput-performance": THROUGHPUT},
                    extra_files=tuned_version_file(tuned))


def _judged(scan, root: Path, *sets: str) -> dict:
    return scan(root, *sets, profile="viya3")["by_id"][RULE]


def test_the_stock_profile_carries_the_modifier():
    assert "\nnet.core.somaxconn=>2048\n" in THROUGHPUT


@pytest.mark.parametrize(("release", "tuned", "sets", "expected", "said"), [
    (RHEL9, (2, 25, 1), (), "pass", "kernel default"),  # 4096 is above 2048: kept
    (RHEL8, (2, 22, 1), (), "pass", ">2048"),  # RHEL 8's 128 raised to 2048
    (RHEL7, (2, 11, 0), (), "pass", ">2048"),  # 128 raised to 2048
    (RHEL7, (2, 9, 0), (), "fail", "kernel default"),  # written as it is: refused, 128 stays
    (RHEL9, (2, 25, 1), ("somaxconn_min=8192",), "fail", "kernel default"),  # 4096 < 8192
    (RHEL8, (2, 22, 1), ("somaxconn_min=8192",), "fail", ">2048"),  # 2048 < 8192
])
def test_a_modifier_is_read_against_the_value_before_tuned(tmp_path, scan, release, tuned,
                                                           sets, expected, said):
    verdict = _judged(scan, _host(tmp_path / "r", release, tuned), *sets)
    assert verdict["result"] == expected, verdict
    evidence = verdict["evidence"][0]
    assert said in f"{evidence['source']} {evidence.get('note', '')}", verdict


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
@pytest.mark.parametrize(("release", "sets", "expected"), [
    (RHEL9, (), "pass"), (RHEL8, (), "pass"), (RHEL9, ("somaxconn_min=8192",), "fail")])
def test_oscap_reads_the_minimum_alike(tmp_path, release, sets, expected):
    root = _host(tmp_path / "r", release, (2, 25, 1))
    tailoring = tailor(root, [*BASELINE_SETS, *sets], tmp_path / "tailoring.xml", "viya3")
    assert oscap_eval(root, tailoring, tmp_path, "viya3")[RULE] == expected


def test_the_fix_writes_a_minimum_and_never_lowers(tmp_path, scan):
    """RHEL 9 with a site minimum of 8192: the fix's sas-performance profile says
    ">8192", which tuned applies only where the key boots lower; merged over the parent's
    ">2048" it raises 4096, and a host booting with more would keep it."""
    root = _host(tmp_path / "r", RHEL9, (2, 25, 1))
    sets = [*BASELINE_SETS, "somaxconn_min=8192"]
    assert _judged(scan, root, "somaxconn_min=8192")["result"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, sets,
                      ["--profile", "viya3", "--rule", RULE])
    run_bash(script, root)
    assert profile_sysctl(root)["net.core.somaxconn"] == ">8192"
    after = _judged(scan, root, "somaxconn_min=8192")
    assert after["result"] == "pass", after
    assert after["evidence"][0]["actual"] == "8192"
    assert "no changes" in run_bash(script, root).stdout


def test_the_tuned_format_writes_a_minimum_only_where_tuned_reads_it(tmp_path):
    for tuned, line in (((2, 25, 1), "net.core.somaxconn=>8192"),
                        ((2, 9, 0), "net.core.somaxconn=8192")):
        root = _host(tmp_path / f"r{tuned[1]}", RHEL9, tuned)
        profile = generate("tuned", tmp_path / f"tuned-{tuned[1]}.conf", root,
                           [*BASELINE_SETS, "somaxconn_min=8192"], ["--profile", "viya3"])
        assert f"\n{line}\n" in profile.read_text()


@pytest.mark.skipif(not oscap_available(), reason="oscap not installed")
def test_the_fixes_upper_bound_is_read_alike_by_oscap(tmp_path, scan):
    """viya3's swappiness is at most 1: the fix writes "<1", which tuned 2.10 on applies only
    where the key boots higher (throughput-performance's 10 here), so a site's 0 would stay.
    Both engines read the profile written as a pass."""
    root = _host(tmp_path / "r", RHEL9, (2, 25, 1))
    rule = "swappiness_at_boot"
    assert scan(root, profile="viya3")["by_id"][rule]["result"] == "fail"
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--profile", "viya3", "--rule", rule]), root)
    assert profile_sysctl(root)["vm.swappiness"] == "<1"
    assert scan(root, profile="viya3")["by_id"][rule]["result"] == "pass"
    tailoring = tailor(root, BASELINE_SETS, tmp_path / "tailoring.xml", "viya3")
    assert oscap_eval(root, tailoring, tmp_path, "viya3")[rule] == "pass"
