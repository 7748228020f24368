"""Striped SAS volumes and SAS's BUFSIZE against the stripe unit (scanner/checks/striping.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    MULTIPATH_UUID_PATTERN,
    PAGE_UNIT_RATIOS,
    QUEUE_IO_MIN,
    SAS_DEFAULT_PAGE_MAX,
)
from ..oval import (
    Element,
    all_of,
    arithmetic,
    capture,
    component,
    concat,
    criterion,
    entity,
    listed,
    literal,
    split,
    unique,
    var,
)
from ..oval_facts import OvalFacts


def _no_multipath_mounted(facts: OvalFacts) -> Element:
    oval = facts.oval
    maps = facts.dm_uuids(facts.mounted_devices(), MULTIPATH_UUID_PATTERN,
                          "SAS file systems mounted on a multipath map")
    return criterion(oval.test("ind:textfilecontent54", "no SAS file system mounts a multipath "
                               "map (one LUN's paths)", maps, existence="none_exist"))


def volume_striped(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.striping.volume_striped, less its ratio test: OVAL cannot pair one
    device's minimum and optimal I/O sizes, so any published optimal size counts."""
    oval = facts.oval
    # One item per device that exists (the mounted names hold empty values where a capture
    # did not match); /sys/class/block has partitions too, which are never striped.
    mounted = oval.obj("ind:textfilecontent54", "devices SAS file systems mount",
                       entity("ind:path", var=oval.local(
                           "class directories of mounted SAS devices",
                           concat("/sys/class/block/", var(facts.mounted_devices()))),
                           var_check="at least one"),
                       entity("ind:filename", "dev"),
                       entity("ind:pattern", r"^([0-9]+:[0-9]+)", op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    striped = oval.state("ind:textfilecontent54", "a striped SAS volume",
                         entity("ind:path", var=oval.local(
                             "class directories of striped SAS volumes",
                             concat("/sys/class/block/", var(facts.striped_devices()))),
                             var_check="at least one"))
    return all_of(criterion(oval.test("ind:textfilecontent54", rule.title, mounted, striped,
                                      existence="any_exist")),
                  _no_multipath_mounted(facts))


# OVAL has no division: the page / unit ratios in PAGE_UNIT_RATIOS are recognised, for
# stripe units and pages below 2**PAIR_SHIFT bytes (32 MiB).
PAIR_SHIFT = 25


def bufsize_matches_stripe(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.striping.bufsize_matches_stripe: the page and each unit nest (one
    divides the other). OVAL arithmetic keeps values paired only while one multi-valued
    input takes part, so each unit u and the page B meet in one number, B * 2**25 + u: it is
    one of u's own pairs u * (k * 2**25 + 1) = (k * u) * 2**25 + u when B = k * u, and one of
    B's pairs B * (2**25 + k) when u = k * B."""
    oval = facts.oval
    units_object = facts.queue_files(facts.striped_devices(), QUEUE_IO_MIN, r"^([0-9]+)\s*$",
                                     "stripe units of striped SAS volumes")
    units = oval.local("stripe units of striped SAS volumes (bytes)",
                       component(units_object, "subexpression"), datatype="int")
    bufsize = facts.external("sas_bufsize_bytes")
    # Each unit's and the page's pairs are numbers a local variable computes in place: a
    # variable of the ratios, or of either side's pairs, is listed with all its values
    # wherever it is used (oscap lists every variable an object or state is built from),
    # and those lists were some 170 KB of an ARF (#66). The two sides meet in one list by
    # pairing each with each in a text and splitting it again, duplicates dropped.
    unit_pairs = arithmetic("multiply", var(units), listed(
        [str((k << PAIR_SHIFT) + 1) for k in PAGE_UNIT_RATIOS], ","))

    # The page in effect: sas_bufsize_bytes, or SAS's largest own page where it is 0. One
    # variable rather than a test per case: each test lists every pair it compared, and two
    # of them were 4 MB of an ARF (#66).
    page = oval.local("the SAS page in effect (bytes): BUFSIZE, or SAS's largest own page "
                      "where BUFSIZE is 0", capture(r"^(?:0/)?([0-9]+)", concat(
                          var(oval.local("sas_bufsize_bytes as text", var(bufsize))),
                          f"/{SAS_DEFAULT_PAGE_MAX}")), datatype="int")
    shift = literal(str(1 << PAIR_SHIFT), datatype="int")
    wanted = oval.local("the page x 2^25 + each stripe unit", arithmetic(
        "add", arithmetic("multiply", var(page), shift), var(units)), datatype="int")
    page_pairs = arithmetic("multiply", var(page), listed(
        [str((1 << PAIR_SHIFT) + k) for k in PAGE_UNIT_RATIOS], ","))
    either = oval.local("pairs of the page and each stripe unit", unique(split(
        ",", concat(unit_pairs, ",", page_pairs))), datatype="int")
    paired = oval.state("ind:variable", "the page and its unit nest",
                        entity("ind:value", datatype="int", var=either,
                               var_check="at least one", entity_check="all"))
    return criterion(oval.test("ind:variable", rule.title,
                               oval.values_of("stripe units paired with the page", wanted),
                               paired, existence="any_exist"))
