"""Small line formats: /proc/cpuinfo, /proc/meminfo, /etc/os-release, shell variables.

Samples::

    /proc/cpuinfo:   flags : fpu vme de pse tsc msr pae mce cx8 apic hypervisor
    /proc/meminfo:   MemTotal:       49283116 kB
    /etc/os-release: PRETTY_NAME="Red Hat Enterprise Linux 8.9 (Ootpa)"
"""

from __future__ import annotations

import shlex

from .. import linear_re as re


def cpuinfo_flags(text: str) -> set[str]:
    """Flags of the first processor (x86 ``flags``, arm64 ``Features``)."""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def cpuinfo_count(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.split(":", 1)[0].strip() == "processor")


def cpuinfo_physical_cores(text: str) -> tuple[int, str]:
    """Physical cores (distinct ``physical id``/``core id`` pairs, so hyper-threads count
    once) and how they were counted; logical CPUs where /proc/cpuinfo has no core ids (some
    virtual machines, other architectures)."""
    cores: set[tuple[str, str]] = set()
    package = core = ""
    for line in [*text.splitlines(), ""]:
        name, _, value = line.partition(":")
        name = name.strip()
        if name == "physical id":
            package = value.strip()
        elif name == "core id":
            core = value.strip()
        elif not line.strip():  # a blank line ends one processor's block
            if core:
                cores.add((package, core))
            package = core = ""
    if cores:
        return len(cores), "physical cores (physical id, core id in /proc/cpuinfo)"
    return max(cpuinfo_count(text), 1), "logical CPUs (/proc/cpuinfo has no core ids)"


def meminfo_kib(text: str, key: str = "MemTotal") -> int | None:
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() == key:
            words = value.split()
            if words:
                return ascii_int(words[0])
    return None


# No value of these files (os-release, selinux/config, sysconfig) runs to pages: a longer one
# is kept as written, not unquoted (shlex reads a character at a time, about 12 s a MiB).
MAX_SHELL_VALUE = 4096


def shell_assignments(text: str) -> dict[str, str]:
    """``KEY=value`` lines with shell quoting, as in /etc/os-release."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        key, sep, value = raw.strip().partition("=")
        if not sep or not key.isidentifier():
            continue
        if len(value) > MAX_SHELL_VALUE:
            values[key] = value
            continue
        try:
            words = shlex.split(value)
        except ValueError:
            words = [value.strip("\"'")]
        values[key] = " ".join(words)
    return values


# At most 20 digits (2**64 has 20): a longer number is no value a kernel file holds, and
# int() refuses strings past 4,300 digits.
_ASCII_DIGITS = re.compile("[0-9]{1,20}")


def ascii_int(text: str) -> int | None:
    """A non-negative whole number written in ASCII digits, else None. (str.isdigit and int()
    also take other scripts' digits and superscripts, which no kernel file holds.)"""
    text = text.strip()
    return int(text) if _ASCII_DIGITS.fullmatch(text) else None
