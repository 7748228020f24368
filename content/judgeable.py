"""Whether a SAS file-system rule can be judged at all: its SAS directories are named and
there. Wrapped around each such rule by content/build.py, so that OVAL errs where sascheck
says notchecked (none named) or error (one missing), and never judges a directory that is
not there as the file system above it."""

from __future__ import annotations

from ..rules.host_layout import SAS_ROLE_VALUES, SAS_ROLES
from .oval import (
    Element,
    all_of,
    capture,
    component,
    concat,
    count,
    criterion,
    entity,
    split,
    substring,
    unique,
    var,
)
from .oval_facts import OvalFacts


def sas_dirs_judgeable(facts: OvalFacts) -> Element:
    """True when a SAS directory is named and every one named exists on the host; an
    OVAL error otherwise (nothing to judge, or a directory that is not there, which must
    never be judged as the file system above it). A state whose variable has no value
    is an error (OVAL 5.11 var_ref semantics, as oscap evaluates them): each marker
    below is the empty pattern when its condition holds and has no value when not.
    Empty items of the comma lists become "/", which exists, on both sides of the count."""
    def build() -> Element:
        oval = facts.oval
        def joined() -> Element:  # a new element each time: lxml moves what it appends
            return concat(*(part for role in SAS_ROLES for part in (
                var(facts.list_text(SAS_ROLE_VALUES[role])), ",")))
        named = oval.local("a SAS directory is named: the empty pattern, else no value",
                           substring(capture("(/)", joined())))
        slashed = oval.local("each named SAS directory, with a slash",
                             concat(split(",", joined()), "/"))
        present = oval.obj("unix:file", "the named SAS directories that exist",
                           entity("unix:path", var=slashed, var_check="at least one"),
                           entity("unix:filename", nil=True))
        counted = oval.local("how many are named and how many exist", concat(
            count(unique(var(slashed))), "=", count(component(present, "path"))))
        every = oval.local("every named SAS directory exists: the empty pattern, else no "
                           "value", substring(capture(r"^([0-9]+)=\1$", var(counted))))
        system = oval.obj("ind:family", "the operating system family")
        tests = [oval.test("ind:family", comment, system, oval.state(
            "ind:family", comment, entity("ind:family", op="pattern match", var=marker,
                                          var_check="at least one")))
                 for comment, marker in (("a SAS directory is named", named),
                                         ("every named SAS directory exists", every))]
        return all_of(*(criterion(test) for test in tests),
                      comment="SAS directories to judge (an error when none is named or "
                              "one named is missing)")
    return facts.once("sas-judgeable", build)
