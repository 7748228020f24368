"""The OVAL facts of tuned: whether it starts at boot, its chain of profiles, and the
setting the chain leaves (scanner/tuned/ does the same for the scanner). A part of
OvalFacts (content/oval_facts.py), which builds each piece once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..rules.host_layout import (
    SURE_RUNLEVEL_DIRS,
    SURE_WANTS_DIRS,
    SYSTEMD_WANTS_DIRS,
    SYSV_RUNLEVEL_DIRS,
    TUNED_ACTIVE_FILES,
    TUNED_BINARIES,
    TUNED_PROFILE_DIRS,
    TUNED_PROFILE_MODE_FILE,
    TUNED_SHIPPED_PROFILES,
)
from .oval import (
    Element,
    OvalDocument,
    all_of,
    any_of,
    capture,
    component,
    concat,
    count,
    criterion,
    entity,
    listed,
    none_of,
    set_node,
    split,
    var,
)
from .platforms import kvm_guest

T = TypeVar("T")

CHAIN_DEPTH = 5  # active tuned profiles + 4 levels of include=
# A tuned option line inside a section (unit) that applies everywhere: no line of the
# section, before or after it, is a cpuinfo_regex, a uname_regex or an enabled= other than
# "true", the one text every tuned release reads as true (tuned/profiles/unit.py: "1" from
# 2.11, "True" from 2.13; yes and on never). Units with those conditions are left out (the
# scanner evaluates them against the host and its tuned release; docs/oval.md lists the
# difference). Matched against the whole file, line anchors multiline.
_TUNED_CONDITION = (r"(?![ \t]*(?:cpuinfo_regex|uname_regex)[ \t]*=)"
                    r"(?![ \t]*enabled[ \t]*=(?![ \t]*true[ \t]*$))")
# tuned 2.19+ reads tuned.conf with inline_comment_prefixes=('#'): a '#' after whitespace
# ends the value (tuned/profiles/loader.py).
TUNED_VALUE_END = r"(?:[ \t]+#[^\n]*)?[ \t]*$"
TUNED_UNIT_LINE = (r"^\[[^\]\n]*\][^\n]*\n(?:(?!\[)" + _TUNED_CONDITION + r"[^\n]*\n)*?"
                   r"[ \t]*{key}[ \t]*=[ \t]*{value}" + TUNED_VALUE_END
                   + r"(?=(?:\n(?!\[)" + _TUNED_CONDITION
                   + r"[^\n]*)*(?:\n\[|\n?(?![\s\S])))")


def sysv_start_link(oval: OvalDocument, service: str, comment: str, surely: bool) -> str:
    """The object of a SysV service's start link: in the server run level (``surely``: what
    makes a setting pass), else in any run level (what makes one fail)."""
    levels = oval.paths("SysV server run-level directories" if surely else
                        "SysV run-level directories",
                        SURE_RUNLEVEL_DIRS if surely else SYSV_RUNLEVEL_DIRS)
    return oval.obj("unix:file", comment,
                    entity("unix:path", var=levels, var_check="at least one"),
                    entity("unix:filename", rf"^S[0-9]{{2}}{service}$", op="pattern match"))


class TunedFacts:
    """OvalFacts' tuned part: needs its document and its build-once cache."""
    oval: OvalDocument

    def once(self, key: str, build: Callable[[], T]) -> T:
        raise NotImplementedError  # OvalFacts.once

    # -- tuned ---------------------------------------------------------------------------
    def tuned_enabled(self, surely: bool = True) -> Element:
        """tuned starts at the next boot. ``surely``: enabled where every boot starts it
        (what makes a setting pass); else wherever some boot may (what makes one fail).
        OVAL cannot follow default.target or inittab (scanner/boot/target.py does)."""
        return self.once(f"tuned-enabled:{surely}", lambda: self.oval.extension(
            "tuned is enabled at boot and loads its active profile" if surely else
            "tuned may start at boot and load its active profile",
            self._tuned_enabled(surely)))

    def _tuned_enabled(self, surely: bool) -> Element:
        oval = self.oval
        wants = oval.paths("systemd target wants directories" if not surely else
                           "wants directories every boot reaches",
                           SURE_WANTS_DIRS if surely else SYSTEMD_WANTS_DIRS)
        unit = oval.obj("unix:file", "tuned.service wanted at boot",
                        entity("unix:path", var=wants, var_check="at least one"),
                        entity("unix:filename", "tuned.service"))
        sysv = sysv_start_link(oval, "tuned", "tuned SysV start link", surely)
        # profile_mode auto (tuned 2.9+): tuned starts its recommended profile, not
        # active_profile, which OVAL cannot work out (scanner/tuned/recommend.py): it then
        # counts nothing tuned's active profile sets.
        auto = oval.obj("ind:textfilecontent54", "tuned's profile_mode is auto",
                        entity("ind:filepath", TUNED_PROFILE_MODE_FILE),
                        entity("ind:pattern", r"^\s*auto\s*$", op="pattern match"),
                        entity("ind:instance", "1", datatype="int"))
        return all_of(
            any_of(criterion(oval.test("unix:file", "tuned starts at boot (systemd)", unit)),
                   criterion(oval.test("unix:file", "tuned starts at boot (SysV)", sysv))),
            none_of(criterion(oval.test("ind:textfilecontent54", "profile_mode auto", auto))),
            comment="tuned is enabled at boot and loads its active profile")

    def guest(self) -> Element:
        """The host is a KVM guest (the role_kvm_guest platform's test)."""
        return kvm_guest(self.oval)  # the document stores its tests once

    def tuned_installed(self) -> Element:
        oval = self.oval
        files = oval.obj("unix:file", "tuned programs",
                         entity("unix:filepath", var=oval.paths("tuned programs", TUNED_BINARIES),
                                var_check="at least one"))
        directory = oval.obj("unix:file", "tuned profile directory",
                             entity("unix:path", TUNED_SHIPPED_PROFILES),
                             entity("unix:filename", nil=True))
        return any_of(criterion(oval.test("unix:file", "tuned program exists", files)),
                      criterion(oval.test("unix:file", f"{TUNED_SHIPPED_PROFILES} exists", directory)),
                      comment="tuned is installed")

    def tuned_levels(self) -> list[str]:
        """Profile names: the active ones, then what they include, level by level."""
        def build() -> list[str]:
            oval = self.oval
            # A union of one object per file, not a variable of the files: oscap lists a
            # variable's values with every object and test built on it, and every tuned
            # object is built on this one (#66).
            active = oval.obj("ind:textfilecontent54", "active tuned profiles", set_of=tuple(
                oval.obj("ind:textfilecontent54", f"active tuned profile in {path}",
                         entity("ind:filepath", path),
                         entity("ind:pattern", r"(\S+)", op="pattern match"),
                         entity("ind:instance", "1", datatype="int",
                                op="greater than or equal"))
                for path in TUNED_ACTIVE_FILES))
            levels = [oval.local("active tuned profiles", component(active, "subexpression"))]
            for depth in range(1, CHAIN_DEPTH):
                included = oval.obj(
                    "ind:textfilecontent54", f"tuned include= at level {depth}",
                    entity("ind:filepath", var=self.tuned_files(levels[-1]),
                           var_check="at least one"),
                    entity("ind:pattern", r"^[ \t]*include[ \t]*=[ \t]*(.*?)" + TUNED_VALUE_END,
                           op="pattern match"),
                    entity("ind:instance", "1", datatype="int", op="greater than or equal"))
                # loader._load_profile splits on ',' or ';'; '-name' is a conditional include
                levels.append(oval.local(f"tuned profiles at include level {depth}", capture(
                    r"^\s*-?(\S+)\s*$",
                    split(";", split(",", component(included, "subexpression"))))))
            return levels
        return self.once("tuned", build)

    def tuned_files(self, names: str) -> str:
        # One concat over the directories (a cartesian product), listed in place: a
        # variable of the directories was 66 KB of an ARF (#66).
        return self.oval.local("tuned.conf files", concat(
            listed(TUNED_PROFILE_DIRS, ";"), "/", var(names), "/tuned.conf"))

    def tuned_setting(self, key_pattern: str, acceptable: list[tuple[str, str | None]],
                      comment: str, surely: bool = True) -> Element:
        """The effective tuned setting is acceptable: the highest level of the chain that
        sets the key decides (a profile overrides what it includes). ``acceptable`` lists
        (value regex with one group, state on that group or None); any one may hold.
        ``surely`` as tuned_enabled: False where the setting makes a rule fail."""
        return self.once(f"tuned-setting:{key_pattern}:{acceptable}:{surely}",
                         lambda: self.oval.extension(comment, self._tuned_setting(
                             key_pattern, acceptable, comment, surely)))

    def _tuned_setting(self, key_pattern: str, acceptable: list[tuple[str, str | None]],
                       comment: str, surely: bool) -> Element:
        oval = self.oval

        def setting(level: int, value_pattern: str) -> str:
            return oval.obj("ind:textfilecontent54", f"{comment}: level {level}",
                            entity("ind:filepath", var=self.tuned_files(self.tuned_levels()[level]),
                                   var_check="at least one"),
                            entity("ind:pattern", TUNED_UNIT_LINE.format(
                                key=key_pattern, value=value_pattern), op="pattern match"),
                            entity("ind:instance", "1", datatype="int",
                                   op="greater than or equal"))

        # The highest level that sets the key decides. Each level's lines are kept only
        # where no level above sets it (a filter per level above, on its count of lines), so
        # one test per acceptable pattern judges the chain: per-level tests were some 400 of
        # an ARF's tests (#66).
        above = [self._sets_above(setting(level, "(.*?)"), comment, level)
                 for level in range(CHAIN_DEPTH - 1)]

        def decided(value_pattern: str) -> str:
            branch: Element | None = None
            for level in reversed(range(CHAIN_DEPTH)):
                leaf = set_node([setting(level, value_pattern)],
                                [("exclude", shadow) for shadow in above[:level]])
                branch = leaf if branch is None else set_node([leaf, branch])
            assert branch is not None
            return oval.obj("ind:textfilecontent54",
                            f"{comment}: the highest level that sets it", set_tree=branch)

        acceptable_tests = []
        for pattern, state in acceptable:
            if state is None:  # the value alone decides: the key's own lines, one state
                said = oval.state("ind:textfilecontent54", f"a value matching {pattern}",
                                  entity("ind:subexpression", f"^(?:{pattern})$",
                                         op="pattern match"))
                test = oval.test("ind:textfilecontent54", f"{comment}: acceptable",
                                 decided("(.*?)"), said, check="at least one")
            else:  # the state reads the pattern's group
                test = oval.test("ind:textfilecontent54", f"{comment}: acceptable",
                                 decided(pattern), state)
            acceptable_tests.append(criterion(test))
        return all_of(self.tuned_enabled(surely), any_of(*acceptable_tests), comment=comment)

    def _sets_above(self, lines: str, comment: str, level: int) -> str:
        """A state that every line matches when ``lines`` (the key at ``level``) has an
        item, and none does otherwise: a filepath pattern ^(?!N) from the first digit N of
        the count (no path starts with a digit), or ^(?!), which nothing matches."""
        oval = self.oval
        pattern = oval.local(f"{comment}: set at level {level}, as a pattern", concat(
            "^(?!", capture(r"^([1-9])", count(component(lines, "filepath"))), ")"))
        return oval.state("ind:textfilecontent54", f"{comment}: set at level {level}",
                          entity("ind:filepath", op="pattern match", var=pattern))
