"""dm-multipath path grouping (scanner/checks/multipath.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    MULTIPATH_ALL_PATHS,
    MULTIPATH_CONF,
    MULTIPATH_CONF_DIR,
    MULTIPATH_UUID_PREFIX,
)
from ..oval import (
    Element,
    any_of,
    criterion,
    entity,
    none_of,
)
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
    maps = [criterion(oval.test(
        "ind:textfilecontent54", f"a multipath map at SAS stack level {depth}", facts.dm_uuids(
            names, f"^{MULTIPATH_UUID_PREFIX}", f"multipath maps at SAS stack level {depth}")))
        for depth, names in enumerate(facts.device_levels())]
    return any_of(none_of(*maps, comment="no SAS file system is on a multipath map"),
                  none_of(*(criterion(oval.test("ind:textfilecontent54", comment, object_id,
                                                other, check="at least one"))
                            for object_id, comment in ((conf, "multipath.conf idles paths"),
                                                       (drop_ins, "a conf.d file idles paths"))),
                          comment="multipath uses all paths"))
