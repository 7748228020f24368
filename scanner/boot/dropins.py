"""Drop-in directories, as udev, systemd-sysctl, systemd-tmpfiles and systemd read them: the
files ending in a suffix across several directories, a file hiding any namesake in a later
directory; callers read the result in file-name order."""

from __future__ import annotations

from ..sources.hostroot import FactError, HostRoot


def merged(root: HostRoot, directories: tuple[str, ...], suffix: str,
           problems: list[str]) -> dict[str, str]:
    """File name -> in-root path, from the first directory that has it. A directory that
    cannot be listed is noted in ``problems`` and skipped."""
    files: dict[str, str] = {}
    for directory in directories:
        try:
            names = root.listdir(directory)
        except FactError as exc:
            problems.append(str(exc))
            continue
        for name in names:
            if name.endswith(suffix):
                files.setdefault(name, f"{directory}/{name}")
    return files
