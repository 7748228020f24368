"""The sascheck command line's commands and options (argparse)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import __version__
from .cli_common import EXIT_USAGE
from .rules.host_layout.sas import SAS_ROLES

ROLE_CHOICES = ("auto", "bare_metal", "kvm_guest", "kvm_host", "container")


def _profile_names() -> list[str]:
    """The catalogue's profiles, by their files (loading the catalogue would slow every
    command's start-up for a help text)."""
    from pathlib import Path

    from . import rules

    return sorted(path.stem for path in (Path(rules.__file__).parent / "profiles").glob("*.yml"))
EPILOG = """examples:
  sascheck scan --html report.html          scan this host, write the HTML report
  sascheck scan --root /mnt/image --set sas_work_dirs=/saswork
  sascheck fix --format bash -o fix.sh      the fixes for what failed here
  sascheck report --fleet results/ -o fleet.html

exit status:
  0  every judged rule passed (scan), or the output was written
  1  usage error: a bad option, value, rule or file (one line says which)
  2  findings: a rule failed (scan), or got worse (diff)
  3  a fleet report or diff was written, but some results files were unreadable
  70 a bug in sascheck: its traceback is shown (please report it)
  (a fix script sascheck wrote exits 4 when it refuses a host it was not written
  for; --any-host overrides)

site values (--set NAME=VALUE): `sascheck rules --values` lists them all with
their defaults; `sascheck explain RULE` names those a rule reads.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2; 2 means findings here
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sascheck",
        description="Check a RHEL host's tuning for SAS: THP, I/O scheduler, read-ahead, "
                    "barriers, noatime, file systems, tuned, CPU governor.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sascheck {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    scan = commands.add_parser("scan", help="scan a host (or a root directory) and report")
    scan_source = scan.add_mutually_exclusive_group()
    scan_source.add_argument("--root", default="/", metavar="DIR",
                             help="a directory holding another system's files (default: this "
                                  "host)")
    scan_source.add_argument("--snapshot", metavar="FILE",
                             help="scan a snapshot archive written by 'sascheck collect'")
    scan_source.add_argument("--sosreport", metavar="FILE|DIR",
                             help="scan a sosreport (its tar archive or unpacked directory)")
    scan.add_argument("--profile", default="default", metavar="NAME",
                      help="rule profile: " + ", ".join(_profile_names()) + " (default: default; "
                           "sascheck rules lists what each selects)")
    scan.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                      help="set a site value; repeatable; lists are comma-separated")
    scan.add_argument("--role", default="auto", choices=ROLE_CHOICES,
                      help="what the host is (default: detect)")
    scan.add_argument("--tailoring", metavar="FILE",
                      help="take profile and values from an XCCDF tailoring file "
                           "(as written by 'sascheck tailor'); --set still overrides")
    scan.add_argument("--json", metavar="FILE", help="write results as JSON ('-' for stdout)")
    scan.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    scan.add_argument("--junit", metavar="FILE", help="write JUnit XML (a test case per rule)")
    scan.add_argument("--prometheus", metavar="FILE",
                      help="write metrics for node_exporter's textfile collector (*.prom)")
    scan.add_argument("--quiet", action="store_true", help="no table on the terminal")
    scan.add_argument("-v", "--verbose", action="store_true",
                      help="under each failing rule, what the papers measured, its fix step "
                           "and its evidence (by default one line a rule); on stderr, each "
                           "file the scan read and each rule's verdict")

    build = commands.add_parser("build", help="compile the rules into the SCAP data stream")
    build.add_argument("--output", default=None, metavar="DIR",
                       help="where to write sascheck-ds.xml (default: content/ in a source "
                            "checkout, else the current directory)")

    tailor = commands.add_parser(
        "tailor", help="write an XCCDF tailoring file with this host's site values for oscap")
    tailor_source = tailor.add_mutually_exclusive_group()
    tailor_source.add_argument("--root", default="/", metavar="DIR",
                               help="discover SAS directories under this root (default: this "
                                    "host)")
    tailor_source.add_argument("--snapshot", metavar="FILE", help="a 'sascheck collect' archive")
    tailor_source.add_argument("--sosreport", metavar="FILE|DIR",
                               help="a sosreport (tar archive or unpacked directory)")
    tailor.add_argument("--profile", default="default", metavar="NAME")
    tailor.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    tailor.add_argument("-o", "--output", required=True, metavar="FILE")

    fix = commands.add_parser("fix", help="generate remediations for the rules that failed")
    fix.add_argument("--format", required=True,
                     choices=("bash", "ansible", "tuned", "tuned-cr", "udev"),
                     help="tuned-cr: a Tuned CR for OpenShift's Node Tuning Operator")
    fix.add_argument("--revert", action="store_true",
                     help="with --format tuned-cr: print the command that removes the CR")
    source = fix.add_mutually_exclusive_group()
    source.add_argument("--from", dest="from_json", metavar="RESULTS.json",
                        help="results of an earlier 'sascheck scan --json'")
    source.add_argument("--root", default=None, metavar="DIR",
                        help="scan this root now (default: this host)")
    source.add_argument("--snapshot", metavar="FILE", help="scan this 'sascheck collect' archive")
    source.add_argument("--sosreport", metavar="FILE|DIR",
                        help="scan this sosreport (tar archive or unpacked directory)")
    source.add_argument("--fleet", metavar="RESULTS_DIR",
                        help="every host of a fleet results directory, each planned from its "
                             "own results (-o names a new directory)")
    fix.add_argument("--max-age", type=float, default=7.0, metavar="DAYS",
                     help="with --fleet: refuse hosts whose results are older (0: any age)")
    fix.add_argument("--profile", default=None, metavar="NAME")
    fix.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    fix.add_argument("--role", default="auto", choices=ROLE_CHOICES)
    fix.add_argument("--all", action="store_true", help="every rule of the profile, not only "
                                                       "those that failed")
    fix.add_argument("--rule", action="append", default=[], metavar="ID",
                     help="only these rules (repeatable)")
    fix.add_argument("-o", "--output", metavar="FILE",
                     help="the fix (with --fleet: a new directory); needed unless --revert")

    report = commands.add_parser(
        "report", help="HTML report from results: one host, or a fleet (sascheck JSON and "
                       "oscap ARF, mixed)")
    report.add_argument("results", nargs="+", metavar="RESULT",
                        help="sascheck JSON (scan --json) or oscap ARF (--results-arf) files")
    report.add_argument("-o", "--output", metavar="FILE.html",
                        help="the HTML page (needed unless --failing, --csv or --prometheus "
                             "is given)")
    report.add_argument("--failing", metavar="RULE",
                        help="print the hosts failing RULE, one name a line (for "
                             "ansible-playbook --limit @FILE)")
    report.add_argument("--csv", metavar="FILE",
                        help="also write the matrix as CSV: host, rule, result, actual")
    report.add_argument("--junit", metavar="FILE", help="also write JUnit XML")
    report.add_argument("--prometheus", metavar="FILE",
                        help="also write the fleet's metrics for node_exporter's textfile "
                             "collector: hosts per rule and result, each host's score")
    report.add_argument("--fleet", action="store_true",
                        help="a fleet report even for a single host")
    report.add_argument("--baseline", metavar="DIR|FILE", action="append", default=[],
                        help="earlier results: mark each rule that got worse since (repeatable)")

    diff = commands.add_parser(
        "diff", help="what changed between two sets of results: per host and rule (exit 2 "
                     "when a rule got worse)")
    diff.add_argument("old", metavar="OLD", help="results file or directory of results")
    diff.add_argument("new", metavar="NEW", help="results file or directory of results")
    diff.add_argument("--json", metavar="FILE", help="write the changes as JSON ('-' for stdout)")
    diff.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    diff.add_argument("--quiet", action="store_true", help="no table on the terminal")

    collect = commands.add_parser(
        "collect", help="archive the files a scan reads, to scan elsewhere (--snapshot)")
    collect.add_argument("--root", default="/", metavar="DIR")
    collect.add_argument("--profile", default="default", metavar="NAME")
    collect.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    collect.add_argument("-o", "--output", metavar="FILE.tar.gz")
    collect.add_argument("--script", action="store_true",
                         help="print a standalone shell script (coreutils and tar only) that "
                              "collects the same files on a host without sascheck")

    from .scan_snapshots import add_parser as add_scan_snapshots
    add_scan_snapshots(commands)

    iotest = commands.add_parser(
        "iotest", help="measure each SAS file system's sequential throughput with fio "
                       "(writes test files; this host only)")
    iotest.add_argument("--role", dest="roles", action="append", default=[],
                        choices=SAS_ROLES,
                        help="only the file systems of this SAS role (repeatable)")
    iotest.add_argument("--dir", dest="dirs", action="append", default=[], metavar="DIR",
                        help="also test the file system holding DIR (repeatable)")
    iotest.add_argument("--method", choices=("sas", "fio-direct"), default="sas",
                        help="sas (default): SAS's own way, one writer per physical core, "
                             "64K blocks, buffered writes closed by fsync, the cache dropped "
                             "before reading, files twice the RAM; fio-direct: direct I/O, "
                             "256K blocks, at most 16 jobs, 15 s a phase")
    iotest.add_argument("--concurrent", action="store_true",
                        help="test every file system at once (as SAS jobs load DATA, WORK "
                             "and UTILLOC together) and report each and the sum")
    iotest.add_argument("--size", metavar="SIZE",
                        help="file size per job, e.g. 2G (default: sas, twice the RAM in "
                             "all where a quarter of the free space allows; fio-direct, "
                             "what fits in a quarter of the free space, at most 4G)")
    iotest.add_argument("--jobs", type=int, metavar="N",
                        help="concurrent files (default: one per physical core; "
                             "fio-direct: at most 16)")
    iotest.add_argument("--block", metavar="SIZE",
                        help="block size (default: the configured -BUFSIZE, else 64K; "
                             "fio-direct 256K)")
    iotest.add_argument("--buffered", action="store_true",
                        help="fio-direct through the page cache")
    iotest.add_argument("--dry-run", action="store_true",
                        help="print the fio jobs and the space they need; write nothing")
    iotest.add_argument("--profile", default="default", metavar="NAME")
    iotest.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    iotest.add_argument("--json", metavar="FILE", help="write results as JSON ('-' for stdout)")
    iotest.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    iotest.add_argument("--quiet", action="store_true", help="no progress and no table")

    rules = commands.add_parser("rules", help="list the rule catalogue")
    rules.add_argument("--format", choices=("table", "markdown"), default="table",
                       help="markdown prints the catalogue as the README shows it")
    rules.add_argument("--values", action="store_true",
                       help="list the site values --set takes instead: name, type, default")
    explain = commands.add_parser("explain", help="show one rule with rationale and sources")
    explain.add_argument("rule_id", metavar="ID")
    return parser
