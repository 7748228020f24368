"""Who a results file is of: the controller's word, never the host's.

In a fleet directory (the fleet playbook and ``scan-snapshots`` leave FLEET_MARKER in it)
each file is named by its host's inventory name, percent-encoded. That name is chosen on
the controller: the playbook names the file it fetches or decodes, ``scan-snapshots`` names
its output after the archive the playbook wrote. A file's contents, by contrast, may have
been written on the host (the sascheck and oscap engines run there), so the
``host.inventory_name`` a results file carries is only ever compared with the file's name,
never used as its key: a host naming itself ``all`` or another host's name is flagged and
kept apart, not believed (issue 44).
"""

from __future__ import annotations

import os
from urllib.parse import unquote

FLEET_MARKER = ".sascheck-fleet"  # written by the fleet playbook and scan-snapshots
FLEET_MARKER_TEXT = ("Written by sascheck (fleet-scan.yml or scan-snapshots): each host's "
                     "files here are named by its inventory name (percent-encoded), and "
                     "sascheck report keys hosts by that name alone.\n")
RESULT_NAME_SUFFIXES = (".failed.json", ".arf.xml", ".json")
MAX_NAME = 256


def fleet_inventory_name(path: str) -> str:
    """In a fleet directory, the inventory name the controller gave the file; else ''."""
    directory, name = os.path.split(path)
    if not os.path.isfile(os.path.join(directory or ".", FLEET_MARKER)):
        return ""
    for suffix in RESULT_NAME_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return unquote(name[:-len(suffix)])[:MAX_NAME]
    return ""


def controller_inventory(path: str, claimed: object) -> tuple[str, list[str]]:
    """The host's inventory name as the controller recorded it, and what the file's own
    claim (``host.inventory_name``, written wherever the file was) says against it."""
    inventory = fleet_inventory_name(path)
    if not isinstance(claimed, str) or not claimed or claimed == inventory:
        return inventory, []
    said = repr(claimed[:MAX_NAME])
    if inventory:
        return inventory, [f"the results name the inventory host {said}, but the controller "
                           f"stored them as {inventory!r}: reported under the controller's "
                           "name, never merged with another host's results"]
    return "", [f"the results name the inventory host {said}, but they are not in a fleet "
                "directory, so nothing on the controller vouches for that name: reported "
                "under the host's own name"]

