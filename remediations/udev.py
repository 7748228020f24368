"""udev matches for the devices under SAS file systems, from names only udev would match
byte for byte.

A device-mapper name is chosen by whoever made the volume and a SCSI ``wwid`` is supplied
by the storage device itself, so both are untrusted. A ``"`` or a newline in one would end
the match and start new keys (``RUN+=...``), a ``*`` or ``[`` would make it a glob that
matches other devices. Only values made of the characters below are written; the bash
library gets the same pattern (rendered into the script), so both writers agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Letters, digits and . _ : + @ - ; runs of spaces inside (t10 wwids pad with them).
SAFE_VALUE = "^[A-Za-z0-9][A-Za-z0-9._:+@-]*( +[A-Za-z0-9._:+@-]+)*$"
MAX_VALUE = 128
_SAFE = re.compile(SAFE_VALUE)


def safe(value: str | None) -> bool:
    return bool(value) and len(value or "") <= MAX_VALUE and _SAFE.match(value or "") is not None


@dataclass(frozen=True)
class Match:
    """A udev match, or None with the reason no safe one exists."""
    keys: str | None
    note: str = ""


def match_for(layer: dict[str, Any]) -> Match:
    """The most stable safe match for a storage layer of a scan result: the device-mapper
    name, else its UUID, else the SCSI wwid, else virtio's serial (udev's ID_SERIAL), else the
    kernel name (which can change across reboots, so the note says so)."""
    name = layer.get("device")
    dm_name, dm_uuid, wwid = layer.get("dm_name"), layer.get("dm_uuid"), layer.get("wwid")
    serial = layer.get("serial")
    label = name if isinstance(name, str) and safe(name) else "a device"
    refused = []
    if dm_name:
        if safe(dm_name):
            return Match(f'ENV{{DM_NAME}}=="{dm_name}"')
        refused.append("device-mapper name")
    if dm_uuid:
        if safe(dm_uuid):
            return Match(f'ENV{{DM_UUID}}=="{dm_uuid}"',
                         _note(label, refused, "matched by its device-mapper UUID"))
        refused.append("device-mapper UUID")
    if wwid:
        if safe(wwid.rstrip()):
            return Match(f'KERNEL=="sd*", ATTRS{{wwid}}=="{wwid.rstrip()}"')
        refused.append("wwid")
    if serial:  # virtio-blk: udev's ID_SERIAL is made of it before 99- rules run
        if safe(serial):
            return Match(f'ENV{{ID_SERIAL}}=="{serial}"')
        refused.append("serial")
    if isinstance(name, str) and safe(name):
        return Match(f'KERNEL=="{name}"', _note(
            label, refused, "matched by its kernel name, which can change at the next boot"))
    return Match(None, _note(label, refused, "no safe match: set its scheduler and "
                                             "read-ahead by hand"))


def _note(label: str, refused: list[str], outcome: str) -> str:
    if not refused:
        return f"{label}: {outcome}"
    return (f"{label}: its {' and '.join(refused)} has characters a udev rule cannot carry "
            f"safely; {outcome}")
