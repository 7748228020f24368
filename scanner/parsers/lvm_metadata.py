"""LVM metadata backups (``/etc/lvm/backup/<vg>``, written by every LVM command that changes
the VG), as far as the read-ahead of each logical volume: ``lvchange -r 4096 VG/LV`` keeps
``read_ahead = 4096`` (512-byte sectors) there, and LVM sets it on the LV's device-mapper
device at every activation; without the key (``-r auto``) the kernel's default holds.

Sample (lvm.conf(5) metadata format)::

    sasvg {
        logical_volumes {
            saswork {
                status = ["READ", "WRITE", "VISIBLE"]
                read_ahead = 8192
                segment1 {
                    type = "striped"
                    stripe_count = 1    # linear
                }
            }
        }
    }
"""

from __future__ import annotations

from .. import linear_re as re
from .simple import ascii_int

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|#[^\n]*|[{}\[\]=,]|[^\s{}\[\]=,"#]+')


def lv_read_ahead(text: str) -> dict[str, int]:
    """LV name -> its read_ahead in sectors, for the LVs that set a number."""
    found: dict[str, int] = {}
    path: list[str] = []  # the sections we are in: vg, logical_volumes, lv, ...
    previous = ""
    key = ""
    for token in _TOKEN.findall(text):
        if token.startswith("#"):
            continue
        if token == "{":
            path.append(previous)
        elif token == "}":
            if path:
                path.pop()
        elif token == "=":
            key = previous
        elif key:
            if key == "read_ahead" and len(path) == 3 and path[1] == "logical_volumes" \
                    and (number := ascii_int(token)) is not None:
                found[path[2]] = number
            key = "" if token != "[" else key
        previous = token
    return found
