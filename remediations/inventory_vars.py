"""The sascheck_* variables an inventory may set, one list for both playbooks (issue 48).

The fleet scan (reports/playbooks/fleet-scan.yml) and every fix playbook are run against
the same inventory, so each knows the other's settings and ignores them; a sascheck_*
variable neither knows fails the play, naming the variable meant. Site values are given
once, in ``sascheck_sets`` (sascheck's --set names), which both read the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

# Read by both playbooks: the directory holding the system (an offline image), and the
# site values.
SHARED = ("sascheck_root", "sascheck_sets")
SCAN_SETTINGS = ("sascheck_engine", "sascheck_profile", "sascheck_command", "sascheck_controller_command",
                 "sascheck_collect_script", "sascheck_datastream", "sascheck_remote_dir",
                 "sascheck_results_dir", "sascheck_fleet_report", "sascheck_jobs",
                 "sascheck_collect_timeout")
FIX_SETTINGS = ("sascheck_role", "sascheck_install_tuned", "sascheck_any_host",
                "sascheck_allow_manual", "sascheck_manifest")
KNOWN = (*SHARED, *SCAN_SETTINGS, *FIX_SETTINGS)
# Names earlier releases read, and what replaced them.
RENAMED = {"sascheck_scan_root": "sascheck_root",
           "sascheck_sas_dirs": "sascheck_sets (sas_data_dirs=..., sas_work_dirs=..., "
                                "sas_utilloc_dirs=...)"}


def hints(value_names: Iterable[str]) -> dict[str, str]:
    """For each name a site might mistakenly set, the variable it meant."""
    meant = {f"sascheck_{name}": f"sascheck_sets ({name}=...)" for name in value_names}
    return {**meant, **RENAMED}


FLEET_SCAN = Path(__file__).resolve().parents[1] / "reports" / "playbooks" / "fleet-scan.yml"
PLAYBOOK_BEGIN = "    # BEGIN generated from remediations/inventory_vars.py (scripts/update-generated)\n"
PLAYBOOK_END = "    # END generated\n"
# The task both playbooks run first: a sascheck_* variable neither knows fails the play,
# naming the variable meant. (hostvars holds the inventory's and -e's, not play vars.)
_CHECK_TASK = """\
- name: Check the sascheck_* variables the inventory and -e give
  ansible.builtin.fail:
    msg: >-
      {%- for name in sascheck_unknown -%}
      {{ name }} is not a variable of sascheck's playbooks{{ ('; use ' ~ sascheck_meant[name])
      if name in sascheck_meant else '' }}. {% endfor -%}
      The settings are: {{ sascheck_known | join(', ') }}.
  vars:
    sascheck_unknown: "{{ hostvars[inventory_hostname] | select('match', '^sascheck_')
      | reject('in', sascheck_known) | sort | list }}"
    sascheck_known:
"""


def check_task(value_names: Iterable[str], indent: int = 4) -> str:
    """The check task as YAML lines, indented for a play's task list."""
    lines = [*_CHECK_TASK.splitlines(), *(f"      - {name}" for name in KNOWN),
             "    sascheck_meant:",
             *(f"      {name}: {json.dumps(meant)}" for name, meant in hints(value_names).items()),
             "  when: sascheck_unknown | length > 0", "  tags: [always]"]
    return "".join(" " * indent + line + "\n" for line in lines)


def with_current_variables(text: str, value_names: Iterable[str]) -> str:
    """A playbook's text (fleet-scan.yml) with its generated task made current."""
    head, begin, rest = text.partition(PLAYBOOK_BEGIN)
    _, end, tail = rest.partition(PLAYBOOK_END)
    if not begin or not end:
        raise ValueError("the playbook's generated-task markers are missing")
    return head + begin + check_task(value_names) + end + tail
