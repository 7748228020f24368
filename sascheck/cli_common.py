"""What the command-line modules share: exit codes, the one-line usage error, and the rule
catalogue loaded or refused in one line."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

EXIT_OK, EXIT_USAGE, EXIT_FINDINGS = 0, 1, 2
# A fleet's report or diff was written, but some results files could not be read (each is
# an error row naming it): not the same news as "hosts failed rules".
EXIT_UNREADABLE = 3
EXIT_NOTHING_JUDGED = 4  # scan: no rule passed, failed or errored (not RHEL, say): not "compliant"
EXIT_BUG = 70  # sysexits.h EX_SOFTWARE: an internal error, shown with its traceback


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit 1."""


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's errors about user input into one-line usage errors: an unknown
    profile, a bad site value, an unusable root, an impossible fix. Anything else is a bug
    (main shows its traceback)."""
    from .rules.errors import UserInputError

    try:
        yield
    except UserInputError as exc:
        raise UsageError(str(exc)) from exc


def load_rules() -> Any:
    from .rules import CatalogueError, load_catalogue
    try:
        return load_catalogue()
    except CatalogueError as exc:
        raise UsageError(f"the rule catalogue is invalid:\n{exc}") from exc


class _TerminalSafe(logging.Formatter):
    """A log line as the terminal may show it: the paths and values in it came from the
    host, so its controls are escaped."""

    def format(self, record: logging.LogRecord) -> str:
        from .reports.escaping import for_terminal
        return for_terminal(super().format(record))


@contextlib.contextmanager
def debug_log(shown: bool) -> Iterator[None]:
    """With ``shown`` (`scan -v`): what the scan reads (each file and listing, where a link
    took it, and what it could not read) and each rule's verdict, on stderr, while the
    block runs."""
    if not shown:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_TerminalSafe("debug: %(message)s"))
    logger = logging.getLogger("sascheck")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
