"""dm-multipath path grouping (scanner/checks/multipath.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    MULTIPATH_ALL_PATHS,
    MULTIPATH_CONF,
    MULTIPATH_CONF_DIR,
    MULTIPATH_UUID_PREFIX,
)
from ..oval import Element, all_of, any_of, concat, criterion, entity, none_of, var
from ..oval_facts import OvalFacts


def multipath_all_paths(facts: OvalFacts, rule: Rule) -> Element:
    """Stricter than scanner.checks.multipath (which follows the precedence per SAS map): no
    line of multipath.conf or its conf.d sets another path_grouping_policy."""
    oval = facts.oval
    allowed = "|".join(MULTIPATH_ALL_PATHS)
    conf = oval.obj("ind:textfilecontent54", "multipath.conf path_grouping_policy",
                    entity("ind:filepath", MULTIPATH_CONF),
                    entity("ind:pattern", r'^[ \t]*path_grouping_policy[ \t]+"?([A-Za-z_]+)',
                           op="pattern match"),
                    entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    drop_ins = oval.obj("ind:textfilecontent54", "multipath conf.d path_grouping_policy",
                        entity("ind:path", MULTIPATH_CONF_DIR),
                        entity("ind:filename", r"\.conf$", op="pattern match"),
                        entity("ind:pattern", r'^[ \t]*path_grouping_policy[ \t]+"?([A-Za-z_]+)',
                               op="pattern match"),
                        entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    other = oval.state("ind:textfilecontent54", "a policy that leaves paths idle",
                       entity("ind:subexpression", f"^(?!(?:{allowed})$)", op="pattern match"))
    # As the scanner, only where a SAS file system sits on a multipath map.
    maps = criterion(oval.test(
        "ind:textfilecontent54", "a multipath map in the SAS storage stacks", facts.dm_uuids(
            facts.stack_devices(), f"^{MULTIPATH_UUID_PREFIX}",
            "multipath maps in the SAS storage stacks")))
    multibus = oval.state("ind:textfilecontent54", "multibus",
                          entity("ind:subexpression", "multibus"))
    sets_multibus = any_of(*(criterion(oval.test("ind:textfilecontent54", comment, object_id,
                                                 multibus, check="at least one"))
                             for object_id, comment in ((conf, "multipath.conf says multibus"),
                                                        (drop_ins, "a conf.d file says multibus"))))
    return any_of(none_of(maps, comment="no SAS file system is on a multipath map"),
                  all_of(none_of(*(criterion(oval.test("ind:textfilecontent54", comment,
                                                       object_id, other, check="at least one"))
                                   for object_id, comment in (
                                       (conf, "multipath.conf idles paths"),
                                       (drop_ins, "a conf.d file idles paths"))),
                                 comment="multipath uses all paths"),
                         none_of(all_of(sets_multibus, _mixed_alua_states(facts)),
                                 comment="no multibus over ALUA optimized and non-optimized "
                                         "paths")))


def _mixed_alua_states(facts: OvalFacts) -> Element:
    """Devices under the SAS file systems include ALUA active/optimized and
    active/non-optimized paths (device/access_state; scanner.checks.multipath judges each
    map's groups, OVAL the stacks as a whole)."""
    oval = facts.oval

    def some(state: str) -> Element:
        devices = oval.local("device directories in the SAS storage stacks",
                             concat("/sys/block/", var(facts.stack_devices()), "/device"))
        found = oval.obj("ind:textfilecontent54", f"{state} paths in the SAS storage stacks",
                         entity("ind:path", var=devices, var_check="at least one"),
                         entity("ind:filename", "access_state"),
                         entity("ind:pattern", f"^{state}\\s*$", op="pattern match"),
                         entity("ind:instance", "1", datatype="int"))
        return criterion(oval.test("ind:textfilecontent54", f"a {state} path", found))
    return all_of(some("active/optimized"), some("active/non-optimized"))
