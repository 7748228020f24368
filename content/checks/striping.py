"""Striped SAS volumes and SAS's BUFSIZE against the stripe unit (scanner/checks/striping.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    MULTIPATH_UUID_PATTERN,
    QUEUE_IO_MIN,
    SAS_DEFAULT_PAGE_STEP,
)
from ..oval import (
    Element,
    all_of,
    any_of,
    arithmetic,
    component,
    concat,
    criterion,
    entity,
    literal,
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


# BUFSIZE / stripe unit ratios OVAL can recognise (it has no division): k * unit for k up to
# this many, and stripe units below 2**PAIR_SHIFT bytes (32 MiB).
BUFSIZE_MULTIPLES = 1024


PAIR_SHIFT = 25


def bufsize_matches_stripe(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.striping.bufsize_matches_stripe. OVAL arithmetic keeps values paired
    only while one multi-valued input takes part, so each unit u is paired with its own
    multiples in one number: u * (k * 2**25 + 1) = (k * u) * 2**25 + u, and BUFSIZE B is a
    multiple of u when B * 2**25 + u is among them."""
    oval = facts.oval
    units_object = facts.queue_files(facts.striped_devices(), QUEUE_IO_MIN, r"^([0-9]+)\s*$",
                                     "stripe units of striped SAS volumes")
    units = oval.local("stripe units of striped SAS volumes (bytes)",
                       component(units_object, "subexpression"), datatype="int")
    bufsize = facts.external("sas_bufsize_bytes")
    default_divisors = [str(d) for d in range(1, SAS_DEFAULT_PAGE_STEP + 1)
                        if SAS_DEFAULT_PAGE_STEP % d == 0]
    divides_default = oval.state("ind:textfilecontent54", "a unit every default SAS page spans",
                                 entity("ind:subexpression", f"^(?:{'|'.join(default_divisors)})$",
                                        op="pattern match"))
    shift = literal(str(1 << PAIR_SHIFT), datatype="int")
    wanted = oval.local("BUFSIZE x 2^25 + each stripe unit", arithmetic(
        "add", arithmetic("multiply", var(bufsize), shift), var(units)), datatype="int")
    tags = oval.constant("k x 2^25 + 1 for each multiple k", [
        str((k << PAIR_SHIFT) + 1) for k in range(1, BUFSIZE_MULTIPLES + 1)], datatype="int")
    multiples = oval.local("each stripe unit's multiples, paired with it", arithmetic(
        "multiply", var(units), var(tags)), datatype="int")
    paired = oval.state("ind:variable", "BUFSIZE is a multiple of its unit",
                        entity("ind:value", datatype="int", var=multiples,
                               var_check="at least one", entity_check="all"))
    return any_of(
        all_of(criterion(oval.has_values("sas_bufsize_bytes is 0: SAS picks each page",
                                         bufsize, "^0$")),
               criterion(oval.test("ind:textfilecontent54", f"{rule.title} (SAS's own pages)",
                                   units_object, divides_default, existence="any_exist"))),
        all_of(criterion(oval.has_values("sas_bufsize_bytes is set", bufsize, "^[1-9]")),
               criterion(oval.test("ind:variable", f"{rule.title} (sas_bufsize_bytes)",
                                   oval.values_of("stripe units paired with BUFSIZE", wanted),
                                   paired, existence="any_exist"))),
        comment="BUFSIZE spans whole stripe units")
