"""Where the kernel command line for the next boot is configured.

Samples::

    /etc/default/grub:   GRUB_CMDLINE_LINUX="crashkernel=auto rd.lvm.lv=rhel/root transparent_hugepage=never"
    /boot/loader/entries/<id>.conf (BLS, RHEL 8+):   options root=/dev/mapper/rhel-root ro transparent_hugepage=never
    /etc/kernel/cmdline:   root=UUID=... ro quiet
    /boot/grub/grub.conf (RHEL 6):   kernel /vmlinuz-2.6.32-71.el6.x86_64 ro root=/dev/sda2 elevator=deadline
"""

from __future__ import annotations

import shlex

_GRUB_KEYS = ("GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT")


def _split(value: str) -> list[str]:
    try:
        return shlex.split(value, comments=False, posix=True)
    except ValueError:  # unbalanced quotes: fall back to plain words
        return value.replace('"', " ").replace("'", " ").split()


def grub_defaults_args(text: str) -> list[str]:
    """Kernel arguments set by GRUB_CMDLINE_LINUX[_DEFAULT]; later assignments win."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("export "):
            line = line[len("export "):].strip()
        key, sep, value = line.partition("=")
        if sep and key in _GRUB_KEYS:
            words = _split(value)
            values[key] = " ".join(words)
    args: list[str] = []
    for key in _GRUB_KEYS:
        args.extend(values.get(key, "").split())
    return args


def bls_entry_args(text: str) -> list[str]:
    args: list[str] = []
    for raw in text.splitlines():
        parts = raw.strip().split(None, 1)
        if len(parts) == 2 and parts[0] == "options":
            args.extend(parts[1].split())
    return args


def cmdline_args(text: str) -> list[str]:
    """``/etc/kernel/cmdline`` and ``/proc/cmdline``: whitespace separated, ``#`` comments."""
    words: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0] if raw.lstrip().startswith("#") else raw
        words.extend(line.split())
    return words


def legacy_grub_args(text: str) -> list[list[str]]:
    """The arguments of each ``kernel`` line of a GRUB 0.97 ``grub.conf``."""
    entries = []
    for raw in text.splitlines():
        parts = raw.strip().split()
        if len(parts) >= 2 and parts[0] == "kernel":
            entries.append(parts[2:])
    return entries


def arg_value(args: list[str], name: str) -> str | None:
    """The value of the last ``name=value`` argument (the kernel takes the last one)."""
    found = None
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep and key == name:
            found = value
    return found


def grubenv_vars(text: str) -> dict[str, str]:
    """``/boot/grub2/grubenv``: ``name=value`` lines padded with '#' to 1 KiB."""
    variables: dict[str, str] = {}
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        key, sep, value = raw.partition("=")
        if sep and key.strip():
            variables[key.strip()] = value.strip()
    return variables


def expand_grubenv(args: list[str], variables: dict[str, str]) -> list[str]:
    """Expand ``$kernelopts`` / ``$tuned_params`` as GRUB does for RHEL 8 BLS entries."""
    expanded: list[str] = []
    for arg in args:
        if arg.startswith("$") and arg[1:].strip("{}") in variables:
            expanded.extend(variables[arg[1:].strip("{}")].split())
        else:
            expanded.append(arg)
    return expanded
