"""Monitoring: the metrics file node_exporter's textfile collector reads, parsed with
prometheus_client's own exposition parser; the shipped systemd units, verified by systemd."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sascheck.cli import main

from .support.hosts import BASELINE_SETS, sas_host

PROJECT = Path(__file__).resolve().parent.parent


def _metrics(path: Path) -> dict[str, list[tuple[dict[str, str], float]]]:
    families = text_string_to_metric_families(path.read_text())
    return {family.name: [(sample.labels, sample.value) for sample in family.samples]
            for family in families}


def _scan(root: Path, out: Path, *sets: str) -> int:
    argv = ["scan", "--root", str(root), "--quiet", "--prometheus", str(out), "--json",
            str(out.with_suffix(".json"))]
    for assignment in sets:
        argv += ["--set", assignment]
    return main(argv)


def test_metrics_say_each_rules_result_the_score_and_failures(tmp_path):
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never")
    assert _scan(root, tmp_path / "sascheck.prom", *BASELINE_SETS) == 2
    metrics = _metrics(tmp_path / "sascheck.prom")
    results = {(labels["rule"], labels["result"]): value
               for labels, value in metrics["sascheck_rule_result"]}
    assert results[("thp_disabled", "fail")] == 1 and results[("thp_disabled", "pass")] == 0
    assert results[("read_ahead", "pass")] == 1
    # Every rule has exactly one result set, and one series per possible result.
    rules = {rule for rule, _ in results}
    assert all(sum(results[(rule, r)] for r in ("pass", "fail", "error", "unknown",
                                                 "notapplicable", "notchecked",
                                                 "informational")) == 1 for rule in rules)
    severities = {labels["rule"]: labels["severity"] for labels, _ in metrics["sascheck_rule_result"]}
    assert severities["thp_disabled"] == "high"
    failed = {labels["severity"]: value for labels, value in metrics["sascheck_failed_rules"]}
    assert failed == {"high": 1, "medium": 0, "low": 0}
    [(_, score)] = metrics["sascheck_score_ratio"]
    judged = [value for (rule, result), value in results.items()
              if result in ("pass", "fail", "error") and value == 1]
    assert score == pytest.approx((len(judged) - 1) / len(judged))
    [(_, duration)] = metrics["sascheck_scan_duration_seconds"]
    [(_, when)] = metrics["sascheck_scan_timestamp_seconds"]
    assert 0 < duration < 600 and when > 1.7e9
    [(info, _)] = metrics["sascheck_info"]
    assert info["profile"] == "default" and info["role"] == "bare_metal"


def test_a_host_that_cannot_be_read_scores_zero(tmp_path):
    """Errors count as judged: an empty root scores 0, never a perfect score."""
    (tmp_path / "empty").mkdir()
    assert _scan(tmp_path / "empty", tmp_path / "m.prom") == 2
    metrics = _metrics(tmp_path / "m.prom")
    [(_, score)] = metrics["sascheck_score_ratio"]
    assert score == 0.0
    errors = {labels["rule"] for labels, value in metrics["sascheck_rule_result"]
              if labels["result"] == "error" and value == 1}
    assert "sas_fs_type" in errors


def test_metrics_file_is_replaced_atomically_and_links_are_refused(tmp_path):
    root = sas_host(tmp_path / "root")
    out = tmp_path / "sascheck.prom"
    out.write_text("stale\n")
    inode = out.stat().st_ino
    _scan(root, out, *BASELINE_SETS)
    assert out.stat().st_ino != inode and "stale" not in out.read_text()  # a new file, renamed
    assert not list(tmp_path.glob("*.tmp*")) and not list(tmp_path.glob(".*"))
    (tmp_path / "link.prom").symlink_to(tmp_path / "elsewhere.prom")
    assert _scan(root, tmp_path / "link.prom", *BASELINE_SETS) == 1
    assert not (tmp_path / "elsewhere.prom").exists()


UNITS = PROJECT / "deploy" / "systemd"
INSTALLED_SASCHECK = "/usr/local/bin/sascheck"  # where the unit expects `pip install` to put it


def _exec_start(unit: str) -> list[str]:
    """The ExecStart command line of a unit, continuation lines joined."""
    text = unit.replace("\\\n", " ")
    [line] = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    return line.split("=", 1)[1].split()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_systemd_units_verify_and_break_when_broken(tmp_path):
    """systemd's own verifier accepts the shipped service and timer (ExecStart pointed at
    this checkout's sascheck, the one path the test machine lacks), and refuses a timer
    whose calendar it cannot parse, so a verify that passes means something."""
    sascheck = Path(sys.executable).parent / "sascheck"  # the venv's, as installed
    service = (UNITS / "sascheck.service").read_text().replace(INSTALLED_SASCHECK, str(sascheck))
    (tmp_path / "sascheck.service").write_text(service)
    shutil.copy(UNITS / "sascheck.timer", tmp_path / "sascheck.timer")

    def verify(*units: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["systemd-analyze", "verify", *units], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)

    for unit in ("sascheck-oscap.service", "sascheck-oscap.timer"):
        shutil.copy(UNITS / unit, tmp_path / unit)
    good = verify("./sascheck.service", "./sascheck.timer", "./sascheck-oscap.service",
                  "./sascheck-oscap.timer")
    assert good.returncode == 0, good.stderr
    (tmp_path / "sascheck.timer").write_text(
        (UNITS / "sascheck.timer").read_text().replace("OnCalendar=daily", "OnCalendar=dayly"))
    assert verify("./sascheck.service", "./sascheck.timer").returncode != 0


def test_the_services_command_line_scans_and_writes_its_three_files(tmp_path):
    """The service's own ExecStart, run as written but for the state directory, with
    $SASCHECK_OPTIONS from /etc/sysconfig/sascheck naming a tailoring file: a read-only
    scan of this machine with the site's values, an exit status the unit accepts, and the
    three outputs."""
    argv = _exec_start((UNITS / "sascheck.service").read_text())
    assert argv[:2] == [INSTALLED_SASCHECK, "scan"] and argv[-1] == "$SASCHECK_OPTIONS"
    tailoring = tmp_path / "tailoring.xml"
    assert main(["tailor", "--set", "sas_data_dirs=/srv/site-data", "-o", str(tailoring)]) == 0
    state = "/var/lib/sascheck"
    # systemd splits an unbraced $VARIABLE at white space (systemd.service, "Command lines")
    args = [arg.replace(state, str(tmp_path)) for arg in argv[1:-1]] + [
        "--tailoring", str(tailoring)]
    (tmp_path / "metrics").mkdir()  # StateDirectory= makes it before the service starts
    status = main(args)
    # SuccessExitStatus=2: findings are not a failed service; 4 (nothing judged) is, and is
    # what a machine that is not RHEL, a CI runner, gives
    assert status in (0, 2, 4)
    assert "SuccessExitStatus=2\n" in (UNITS / "sascheck.service").read_text()
    for name in ("sascheck-report.json", "sascheck-report.html", "metrics/sascheck.prom"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "sascheck_rule_result" in _metrics(tmp_path / "metrics/sascheck.prom")
    results = json.loads((tmp_path / "sascheck-report.json").read_text())
    assert results["values"]["sas_data_dirs"] == ["/srv/site-data"]


def test_each_run_keeps_the_previous_ones_results_for_diff(tmp_path):
    """Issue 37: the service's ExecStartPre, as systemd runs it ($$ is a literal $; the
    line is one `/bin/sh -c` command), moves the last run's results to previous/ before the
    scan overwrites them, so that `sascheck diff previous/... now` has two runs to compare."""
    import shlex

    unit = (UNITS / "sascheck.service").read_text()
    [line] = [line for line in unit.splitlines() if line.startswith("ExecStartPre=")]
    argv = shlex.split(line.split("=", 1)[1].replace("$$", "$"))
    assert argv[:2] == ["/bin/sh", "-c"]
    command = argv[2].replace("/var/lib/sascheck", str(tmp_path))
    (tmp_path / "previous").mkdir()  # StateDirectory= makes it
    root = sas_host(tmp_path / "root")
    report = tmp_path / "sascheck-report.json"
    subprocess.run(["/bin/sh", "-c", command], check=True)  # the first run: nothing to keep
    assert main(["scan", "--root", str(root), "--quiet", "--json", str(report),
                 *[f"--set={s}" for s in BASELINE_SETS]]) in (0, 2)
    (root / "sys/kernel/mm/transparent_hugepage/enabled").write_text("[always] madvise never\n")
    subprocess.run(["/bin/sh", "-c", command], check=True)
    assert not report.exists() and (tmp_path / "previous/sascheck-report.json").exists()
    assert main(["scan", "--root", str(root), "--quiet", "--json", str(report),
                 *[f"--set={s}" for s in BASELINE_SETS]]) == 2
    assert main(["diff", str(tmp_path / "previous/sascheck-report.json"), str(report),
                 "--quiet"]) == 2  # THP got worse since the previous run


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
@pytest.mark.parametrize(("unit", "threshold"), [("sascheck.service", 2.5),
                                                 ("sascheck-oscap.service", 4.0)])
def test_the_scan_services_are_sandboxed(tmp_path, unit, threshold):
    """Issue 44: systemd's own exposure score of each unit as shipped (9.1, 'UNSAFE', with
    ProtectSystem and NoNewPrivileges alone); the read-only scan needs no network, no
    kernel changes and, for sascheck's, two capabilities."""
    shutil.copy(UNITS / unit, tmp_path / unit)

    def exposure(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["systemd-analyze", "security", "--offline=true",
                               f"--threshold={int(threshold * 10)}", f"./{path.name}"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    scored = exposure(tmp_path / unit)
    assert scored.returncode == 0, scored.stdout[-2000:]
    assert "PrivateNetwork=" not in "".join(
        line for line in scored.stdout.splitlines() if line.startswith("\u2717"))
    bare = tmp_path / f"bare-{unit}"  # the same unit without its sandbox scores over
    bare.write_text("".join(line + "\n" for line in (UNITS / unit).read_text().splitlines()
                            if not line.startswith(("Private", "Protect", "Restrict",
                                                    "Capability", "SystemCall", "Device",
                                                    "IPAddress", "Lock"))))
    assert exposure(bare).returncode != 0
