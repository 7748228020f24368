"""Where a command's host comes from: this host, a directory holding another system's
root, or a --snapshot or --sosreport opened into a private directory for the command."""

from __future__ import annotations

import argparse
import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from .cli_common import UsageError


@contextlib.contextmanager
def opened_root(args: argparse.Namespace) -> Iterator[str]:
    """The root to read: a directory, this host, or an extracted --snapshot or --sosreport
    (removed after; args.sos holds the sosreport's notes)."""
    args.sos = args.opened_snapshot = None
    if getattr(args, "sosreport", None):
        from .scanner.sources.sosreport import SosreportError
        from .scanner.sources.sosreport import opened as opened_sosreport
        try:
            with opened_sosreport(args.sosreport) as report:
                args.sos = report
                yield report.root
        except SosreportError as exc:
            raise UsageError(str(exc)) from exc
    elif getattr(args, "snapshot", None):
        from .scanner.sources.snapshot import SnapshotError, opened_snapshot
        try:
            with opened_snapshot(args.snapshot) as snapshot:
                args.opened_snapshot = snapshot
                # The collection's site values first: --set given now overrides them.
                if hasattr(args, "set"):
                    args.set = [*snapshot.sets, *args.set]
                yield snapshot.root
        except SnapshotError as exc:
            raise UsageError(str(exc)) from exc
    else:
        yield getattr(args, "root", None) or "/"


def check_root(root: str | None) -> None:
    if root == "":
        raise UsageError("--root needs a directory ('' is not one; omit --root for this host)")


def rooted(command: Callable[[argparse.Namespace], int]
            ) -> Callable[[argparse.Namespace], int]:
    """Run a command with args.root set to the root to read (extracting --snapshot)."""
    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        check_root(getattr(args, "root", None))
        with opened_root(args) as root:
            args.root = root
            return command(args)
    return run


def with_source(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Results that name the sosreport or snapshot scanned (not the temporary directory it
    was opened in), and for a sosreport what was rebuilt and what it lacked."""
    if args.opened_snapshot:
        named: dict[str, Any] = args.opened_snapshot.named(data)
        return named
    if args.sos:
        data["host"]["root"] = args.sos.path
        data["source"] = args.sos.source()
        data["problems"] = [*data["problems"], *(f"sosreport: {gap}" for gap in args.sos.gaps)]
    return data
