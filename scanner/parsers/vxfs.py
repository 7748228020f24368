"""/etc/vx/tunefstab (tunefstab(4)): VxFS tunables applied when each volume is mounted.

Sample (InfoScale 7.0 File System Administrator's Guide, "Tuning I/O")::

    /dev/vx/dsk/sasdg/saswork read_pref_io=262144,read_nstream=16
    /dev/vx/dsk/sasdg/sasdata read_pref_io=262144 read_nstream=16

Options are comma- or blank-separated ``name=value`` pairs; ``#`` starts a comment.
"""

from __future__ import annotations

# VxFS's own values where neither tunefstab nor the volume's layout sets them (vxtunefs(1M)).
READ_PREF_IO_DEFAULT = 65536
READ_NSTREAM_DEFAULT = 1


def parse_tunefstab(text: str) -> dict[str, dict[str, str]]:
    """Block device -> its tunables; a later line for the same device adds to it."""
    found: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].replace(",", " ").split()
        if len(words) < 2 or not words[0].startswith("/"):
            continue
        options = found.setdefault(words[0], {})
        for word in words[1:]:
            name, sep, value = word.partition("=")
            if sep:
                options[name] = value
    return found


def read_ahead_bytes(tunables: dict[str, str]) -> int | None:
    """read_pref_io x read_nstream, or None when either is set to something not a number."""
    try:
        pref = int(tunables.get("read_pref_io", READ_PREF_IO_DEFAULT))
        streams = int(tunables.get("read_nstream", READ_NSTREAM_DEFAULT))
    except ValueError:
        return None
    return pref * streams
