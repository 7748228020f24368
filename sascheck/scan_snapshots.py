"""`sascheck scan-snapshots`: judge many hosts' snapshot archives on the controller, the
agentless fleet scan (reports/playbooks/fleet-scan.yml collects them with collect.sh)."""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from typing import TYPE_CHECKING

from .rules.errors import UserInputError
from .scanner.batch_pool import DEFAULT_SECONDS

if TYPE_CHECKING:
    from .rules import Catalogue


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "scan-snapshots",
        help="scan many snapshot archives (sascheck collect, collect.sh) in parallel, one "
             "results file per host")
    parser.add_argument("snapshots", nargs="+", metavar="SNAPSHOT|DIR",
                        help="archives, or directories whose *.tar.gz are scanned")
    parser.add_argument("-d", "--output-dir", required=True, metavar="DIR",
                        help="where each host's results go, as <archive name>.json (a "
                             "snapshot that cannot be scanned: its failure record)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="worker processes (default: the CPUs this process may use)")
    parser.add_argument("--profile", default="default", metavar="NAME",
                        help="the profile of every host --profiles does not name")
    parser.add_argument("--profiles", metavar="FILE",
                        help="each host's own profile: a JSON object of inventory name "
                             "(the archive's name, decoded) to profile name, as "
                             "fleet-scan.yml writes it from sascheck_profile")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="site values for every host, after those each archive "
                             "carries from its collection")
    parser.add_argument("--host-timeout", type=float, default=DEFAULT_SECONDS, metavar="SECONDS",
                        help="the longest one host's scan may take before it is stopped and "
                             f"that host recorded as failed (default {DEFAULT_SECONDS:g})")
    parser.add_argument("--quiet", action="store_true", help="no progress and no summary")


MAX_PROFILES_BYTES = 64 * 1024 * 1024


def host_profiles(path: str | None, catalogue: Catalogue) -> dict[str, str]:
    """The --profiles file: inventory name -> profile, each profile one sascheck knows."""
    import json

    from .reports.resultfile import read_bytes_capped

    if path is None:
        return {}
    try:
        data = json.loads(read_bytes_capped(path, MAX_PROFILES_BYTES))
    except OSError as exc:
        raise UserInputError(f"--profiles {path}: cannot be read ({exc.strerror})") from exc
    except ValueError as exc:
        raise UserInputError(f"--profiles {path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or not all(
            isinstance(name, str) and isinstance(profile, str) for name, profile in data.items()):
        raise UserInputError(f"--profiles {path}: not an object of host name to profile name")
    for profile in sorted(set(data.values())):
        try:
            catalogue.profile(profile)
        except KeyError as exc:
            hosts = sorted(name for name, chosen in data.items() if chosen == profile)
            raise UserInputError(f"--profiles {path}: {exc.args[0]}, for "
                                 f"{', '.join(hosts[:3])}{' ...' if len(hosts) > 3 else ''}"
                                 ) from None
    return data


def snapshot_files(arguments: list[str]) -> list[str]:
    files: list[str] = []
    for argument in arguments:
        if os.path.isdir(argument):
            files += sorted(glob.glob(os.path.join(glob.escape(argument), "*.tar.gz")))
        elif os.path.isfile(argument):
            files.append(argument)
        else:
            raise UserInputError(f"{argument}: no such snapshot archive or directory")
    if not files:
        raise UserInputError("no snapshot archives (*.tar.gz) to scan")
    return files


def _archive_of(path: str) -> str:
    """The archive a results file of scan-snapshots was written from ('' for any other
    file: results fetched from a host, the playbook's failure records)."""
    import json

    from .reports.resultfile import read_bytes_capped

    try:
        data = json.loads(read_bytes_capped(path))
    except (OSError, ValueError, UserInputError):
        return ""
    if not isinstance(data, dict):
        return ""
    source = data.get("source")
    if isinstance(source, dict) and source.get("kind") == "snapshot":
        return str(source.get("path") or "")
    if data.get("stage") == "scan" and isinstance(source, str):  # its failure record
        return source
    return ""


def remove_orphans(directory: str, written: set[str]) -> list[str]:
    """Remove the results scan-snapshots wrote earlier in ``directory`` from an archive that
    is gone (issue 48: a host removed from the fleet would stay on its page for ever). A
    file this run wrote, or any other kind, is kept. The names removed, for the terminal."""
    removed = []
    for path in sorted(glob.glob(os.path.join(glob.escape(directory), "*.json"))):
        if path in written or path.endswith(".failed.json"):
            continue
        archive = _archive_of(path)
        if archive and not os.path.exists(archive) and not os.path.exists(
                os.path.join(directory, os.path.basename(archive))):
            os.remove(path)
            removed.append(f"{os.path.basename(path)} (its archive {archive} is gone)")
    return removed


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run(args: argparse.Namespace, catalogue: Catalogue) -> bool:
    """Scan every archive; True when a host has findings or was not scanned."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from .batch import BatchOutcome, plan, scan_all
    from .outputs import write_output
    from .reports.escaping import for_terminal, for_terminal_lines
    from .reports.identity import FLEET_MARKER, FLEET_MARKER_TEXT
    from .scanner.scan import check_values

    profiles = host_profiles(args.profiles, catalogue)
    for profile in sorted({args.profile, *profiles.values()}):  # once, not as every host's
        check_values(catalogue, profile, args.set)
    if args.jobs is not None and args.jobs < 1:
        raise UserInputError("--jobs needs a number of processes of at least 1")
    if not args.host_timeout > 0:
        raise UserInputError("--host-timeout needs a number of seconds above 0")
    files = snapshot_files(args.snapshots)
    try:
        os.makedirs(args.output_dir, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"cannot make {args.output_dir}: {exc.strerror}") from exc
    # Its files are named by the controller (each after its archive): their names, not what
    # the results inside say, are the hosts' keys (reports/identity.py). Written as every
    # output is: never through a link planted at the name.
    marker = os.path.join(args.output_dir, FLEET_MARKER)
    if not os.path.isfile(marker):
        write_output(marker, FLEET_MARKER_TEXT)
    jobs = plan(files, args.output_dir, args.profile, args.set, profiles)
    processes = args.jobs or available_cpus()
    failures: list[BatchOutcome] = []
    started = time.monotonic()
    show = not args.quiet and sys.stderr.isatty()
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                  disable=not show) as progress:
        task = progress.add_task("scanning snapshots", total=len(jobs))

        def done(outcome: BatchOutcome) -> None:
            progress.advance(task)
            if outcome.status == "failed":
                failures.append(outcome)

        outcomes = scan_all(jobs, processes, done, args.host_timeout)
    elapsed = time.monotonic() - started
    removed = remove_orphans(args.output_dir, {job.output for job in jobs})
    if not args.quiet:
        for name in removed:
            print(for_terminal(f"removed {name}"), file=sys.stderr)
        for failure in sorted(failures, key=lambda outcome: outcome.snapshot):
            print(for_terminal_lines(f"{failure.snapshot}: not scanned: {failure.message}"),
                  file=sys.stderr)
        findings = sum(1 for outcome in outcomes if outcome.status == "findings")
        print(for_terminal(
            f"{len(outcomes)} snapshots in {elapsed:.1f} s with {min(processes, len(jobs))} "
            f"processes: {len(outcomes) - findings - len(failures)} without findings, "
            f"{findings} with findings, {len(failures)} not scanned; results in "
            f"{args.output_dir}"), file=sys.stderr)
        print(for_terminal(f"next: sascheck report --fleet {args.output_dir} -o fleet.html"),
              file=sys.stderr)
    return bool(failures) or any(outcome.status == "findings" for outcome in outcomes)
