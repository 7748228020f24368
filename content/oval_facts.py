"""The host as OVAL sees it, built once and shared by the rules' checks: site values, the
SAS file systems, the block devices below them, the tuned profile chain and the boot
configuration.

The SAS file system of a directory is the mount with the longest mount point that is a
prefix of it. OVAL has no "longest", so it is computed with strings:

1. every (mount, dir) pair as ``M/|D/`` where ``M/`` is a prefix of ``D/`` (a regex with a
   back-reference keeps only those);
2. a pair is *shadowed* when another mount ``M2/`` lies between: ``M/`` a proper prefix of
   ``M2/`` and ``M2/`` a prefix of ``D/`` (a regex with a look-ahead on ``M/|D/|M2/``);
3. the deepest pairs are the pairs that are not shadowed. OVAL can subtract sets only by
   filtering items, so each pair becomes one item: a textfilecontent54 search of
   /proc/mounts whose pattern carries the pair as quoted text in an optional group,
   ``^(?:\\QM/|D/\\E)?`` (it matches the empty string at the start of any line, whatever
   the pair holds: parentheses, ``$``, spaces); a filter drops the shadowed ones and the
   pattern field gives the survivors back.

Paths containing ``|`` (the pair separator) or ``\\E`` (which ends the quoting) cannot be
expressed this way (see the README).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from ..rules import Variable
from ..rules.host_layout import (
    QUEUE_IO_OPT,
    SAS_ROLE_VALUES,
    SAS_ROLES,
)
from .oval import (
    OvalDocument,
    arithmetic,
    capture,
    component,
    concat,
    entity,
    escape_regex,
    literal,
    split,
    unique,
    var,
)
from .oval_tuned import TunedFacts

STACK_DEPTH = 5  # mounted device + 4 layers below (e.g. LV -> mpath partition -> mpath -> path)
PAIR_OPEN, PAIR_CLOSE = r"^(?:\Q", r"\E)?"
PAIR_FROM_PATTERN = r"^\^\(\?:\\Q(.*)\\E\)\?$"
T = TypeVar("T")
EXTERNAL_TYPES = {"paths": "string", "strings": "string", "integer": "int",
                  "boolean": "boolean"}


@dataclass
class OvalFacts(TunedFacts):
    oval: OvalDocument
    variables: Mapping[str, Variable]
    _cache: dict[str, Any] = field(default_factory=dict)

    def once(self, key: str, build: Callable[[], T]) -> T:
        """Build a piece of facts machinery once; later rules reuse its ids."""
        if key not in self._cache:
            self._cache[key] = build()
        return cast(T, self._cache[key])

    # -- site values -----------------------------------------------------------------
    def external(self, name: str) -> str:
        """The OVAL external variable bound to the XCCDF Value of the site value ``name``."""
        variable = self.variables[name]
        return self.once(f"ext:{name}", lambda: self.oval.external(
            name, EXTERNAL_TYPES[variable.type]))

    def sysctl_wanted(self, params: Mapping[str, Any]) -> str:
        """A one-value sysctl rule's wanted value (rules.check_kinds.sysctl_wanted): its
        constant, else the external variable of its site value."""
        if "value" in params:
            return self.oval.constant(f"{params['key']} as the rule states it",
                                      [str(int(params["value"]))], datatype="int")
        return self.external(params["value_from"])

    def list_text(self, name: str) -> str:
        """A list site value's comma-separated text without white space around it: oscap
        hands an empty <set-value> (SCAP Workbench's, a hand edit's) to OVAL as the white
        space beside it in the tailoring file, which would otherwise name a directory "\\n  "
        (issue 66); none named is then the empty text."""
        return self.once(f"trim:{name}", lambda: self.oval.local(
            f"{name}, white space around it removed",
            capture(r"^\s*([\s\S]*?)\s*$", var(self.external(name)))))

    def listed(self, name: str) -> str:
        """A list site value (comma-separated in XCCDF) as a multi-valued variable."""
        return self.once(f"list:{name}", lambda: self.oval.local(
            f"{name}, one value each", split(",", var(self.list_text(name)))))

    def doubled(self, name: str) -> str:
        """2 x an integer site value (read-ahead in 512-byte sectors from KiB)."""
        return self.once(f"double:{name}", lambda: self.oval.local(
            f"{name} x 2 (sectors)", arithmetic("multiply", var(self.external(name)),
                                                literal("2", datatype="int")), datatype="int"))

    # -- SAS file systems ------------------------------------------------------------
    def _mounts_slashed(self) -> str:
        def build() -> str:
            partitions = self.oval.obj("linux:partition", "every mounted file system",
                                       entity("linux:mount_point", "^/", op="pattern match"))
            return self.oval.local(
                "mount points ending in /",
                concat(capture(r"^(.*?)/*$", concat(component(partitions, "mount_point"), "/")),
                       "/"))
        return self.once("mounts/", build)

    def _pair_items(self, comment: str, pairs_var: str, exclude_var: str | None) -> str:
        """One /proc/mounts item per pair value, minus the pairs in ``exclude_var``."""
        empty = self.oval.state("ind:textfilecontent54", "the empty pair",
                                entity("ind:pattern", PAIR_OPEN + PAIR_CLOSE))
        filters = [("exclude", empty)]
        if exclude_var:
            shadowed = self.oval.state(
                "ind:textfilecontent54", f"{comment}: excluded",
                entity("ind:pattern", var=self.oval.local(
                    f"{comment}: excluded, as patterns",
                    concat(PAIR_OPEN, var(exclude_var), PAIR_CLOSE)),
                    var_check="at least one"))
            filters.append(("exclude", shadowed))
        patterns = self.oval.local(f"{comment}: as patterns",
                                   concat(PAIR_OPEN, var(pairs_var), PAIR_CLOSE))
        return self.oval.obj(
            "ind:textfilecontent54", comment,
            entity("ind:filepath", "/proc/mounts"),
            entity("ind:pattern", op="pattern match", var=patterns, var_check="at least one"),
            entity("ind:instance", "1", datatype="int"),
            filters=filters)

    def sas_mounts(self, role: str) -> str:
        """The mount points of the file systems holding ``role``'s SAS directories."""
        return self._mounts_holding(f"SAS {role}", SAS_ROLE_VALUES[role])

    def scratch_mounts(self) -> str:
        """The mount points of the file systems holding the site's throw-away scratch
        directories (scratch_dirs), and one that no mount point is, so that the variable
        has a value when the site names none (a state over a variable with no value errs)."""
        return self.once("scratch-mounts", lambda: self.oval.union_values(
            "scratch file systems (mount points), and one no mount point is",
            [self._mounts_holding("scratch", "scratch_dirs", existing=True),
             self.oval.constant("no mount point", ["//"])]))

    def _mounts_holding(self, role: str, value: str, existing: bool = False) -> str:
        """The mount points of the file systems holding the directories of ``value``; with
        ``existing``, of those that are there (one that is not is on no file system: never
        judged as the one above it; the SAS roles err on that instead, content/judgeable)."""
        def build() -> str:
            oval = self.oval
            named = var(self.listed(value))
            if existing:
                there = oval.obj("unix:file", f"{role} directories that are there",
                                 entity("unix:path", var=self.listed(value),
                                        var_check="at least one"),
                                 entity("unix:filename", nil=True))
                named = component(there, "path")
            dirs = oval.local(f"{role} directories ending in /",
                              capture(r"^(/[^/]*.*/)$", concat(named, "/")))
            # unique: every (mount, dir) pair that does not hold is an empty capture, and
            # oscap's results list each value of this chain for every object built on it
            raw_pairs = oval.local(f"{role}: mount|dir where the mount holds the dir",
                                   unique(capture(r"^(([^|]*)\|\2.*)$", concat(
                                       var(self._mounts_slashed()), "|", var(dirs)))))
            pairs = oval.local(f"{role}: holding pairs", capture(
                PAIR_FROM_PATTERN, component(self._pair_items(f"{role} pairs", raw_pairs, None),
                                        "pattern")))
            shadowed = oval.local(
                f"{role}: pairs with a deeper mount between",
                unique(capture(r"^(([^|]*)\|\2(?=([^|]+)[^|]*\|\2\3$)[^|]*)\|",
                               concat(var(pairs), "|", var(self._mounts_slashed())))))
            deepest = oval.local(f"{role}: deepest pairs", capture(
                PAIR_FROM_PATTERN, component(self._pair_items(f"{role} deepest pairs", pairs,
                                                         shadowed), "pattern")))
            return oval.local(f"{role} file systems (mount points)",
                              capture(r"^(/|.*?[^/])/?\|", var(deepest)))
        return self.once(f"mounts:{value}", build)

    def sas_partitions(self, role: str) -> str:
        return self.once(f"parts:{role}", lambda: self.oval.obj(
            "linux:partition", f"SAS {role} file systems",
            entity("linux:mount_point", var=self.sas_mounts(role), var_check="at least one")))

    def has_sas_role(self, role: str) -> str:
        return self.once(f"has:{role}", lambda: self.oval.has_values(
            f"SAS {role} directories are placed on a file system", self.sas_mounts(role), "^/"))

    # -- block devices -----------------------------------------------------------------
    def mounted_devices(self) -> str:
        """/sys/block names of the devices the SAS file systems mount (level 0)."""
        def build() -> str:
            oval = self.oval
            parts = oval.obj("linux:partition", "all SAS file systems",
                             set_of=tuple(self.sas_partitions(r) for r in SAS_ROLES))
            devices = oval.local("devices of SAS file systems", component(parts, "device"))
            mapper = oval.local("/dev/mapper names", unique(capture(r"^/dev/mapper/(.+)$",
                                                                    var(devices))))
            plain = oval.local("/dev/NAME names", unique(capture(r"^/dev/([^/]+)$",
                                                                var(devices))))
            named = oval.state("ind:textfilecontent54", "dm name of a SAS device",
                               entity("ind:subexpression", var=mapper, var_check="at least one"))
            dm_names = oval.obj("ind:textfilecontent54", "device-mapper names",
                                entity("ind:path", r"^/sys/block/dm-[0-9]+/dm$",
                                       op="pattern match"),
                                entity("ind:filename", "name"),
                                entity("ind:pattern", r"^(.+?)\s*$", op="pattern match"),
                                entity("ind:instance", "1", datatype="int"),
                                filters=[("include", named)])
            dm = oval.local("dm devices named by /dev/mapper", capture(
                r"^/sys/block/([^/]+)/dm$", component(dm_names, "path")))
            return oval.union_values("block devices mounted by SAS file systems", [dm, plain],
                                     distinct=True)
        return self.once("level0", build)

    def parents(self, names: str, comment: str) -> str:
        """Disks of the partitions among ``names``."""
        oval = self.oval
        patterns = oval.local(f"{comment}: partition directories", concat(
            r"^/sys/block/[^/]+/", escape_regex(var(names)), "$"))
        found = oval.obj("ind:textfilecontent54", f"{comment}: partitions",
                         entity("ind:path", op="pattern match", var=patterns,
                                var_check="at least one"),
                         entity("ind:filename", "partition"),
                         entity("ind:pattern", r"^(\d+)", op="pattern match"),
                         entity("ind:instance", "1", datatype="int"))
        return oval.local(f"{comment}: disks of partitions", unique(capture(
            r"^/sys/block/([^/]+)/", component(found, "path"))))

    def device_levels(self) -> list[str]:
        """Level 0 (mounted) and each level below: slaves and the disks of partitions."""
        def build() -> list[str]:
            oval = self.oval
            levels = [self.mounted_devices()]
            for depth in range(1, STACK_DEPTH):
                above = levels[-1]
                slave_dirs = oval.local(f"level {depth}: slaves directories",
                                        concat("/sys/block/", var(above), "/slaves"))
                slaves = oval.obj("unix:file", f"level {depth}: slaves",
                                  entity("unix:path", var=slave_dirs, var_check="at least one"),
                                  entity("unix:filename", "^[^/]+$", op="pattern match"))
                names = oval.local(f"level {depth}: slave names", component(slaves, "filename"))
                levels.append(oval.union_values(
                    f"level {depth} of the SAS storage stack",
                    [names, self.parents(above, f"level {depth - 1}")], distinct=True))
            return levels
        return self.once("levels", build)

    def stack_devices(self) -> str:
        """Every device at every level of the SAS storage stacks, as one variable. Rules ask
        each question once over it, not once per level: oscap's results list, for every
        object and test, each value of every variable it derives from (the whole mount and
        level chain), so per-level objects made the stack's rules 2.5 MB of an ARF (#66)."""
        return self.once("stack", lambda: self.oval.union_values(
            "every device of the SAS storage stacks", self.device_levels(), distinct=True))

    def queue_files(self, names: str, filename: str, pattern: str, comment: str) -> str:
        paths = self.oval.local(f"{comment}: queue directories",
                                concat("/sys/block/", var(names), "/queue"))
        return self.oval.obj("ind:textfilecontent54", comment,
                             entity("ind:path", var=paths, var_check="at least one"),
                             entity("ind:filename", filename),
                             entity("ind:pattern", pattern, op="pattern match"),
                             entity("ind:instance", "1", datatype="int"))

    def dm_uuids(self, names: str, pattern: str, comment: str) -> str:
        """The device-mapper uuids (dm/uuid) of the devices ``names`` that match ``pattern``."""
        oval = self.oval
        return oval.obj("ind:textfilecontent54", comment,
                        entity("ind:path", var=oval.local(f"{comment}: dm directories",
                                                          concat("/sys/block/", var(names), "/dm")),
                               var_check="at least one"),
                        entity("ind:filename", "uuid"),
                        entity("ind:pattern", pattern, op="pattern match"),
                        entity("ind:instance", "1", datatype="int"))

    def striped_devices(self) -> str:
        """Mounted SAS devices whose queue limits publish a stripe (a non-zero
        optimal_io_size) and that sit on other devices (slaves/), plus "/", which names no
        device, so the variable is never empty. Multipath maps qualify here too: callers
        rule them out (MULTIPATH_UUID_PATTERN)."""
        def build() -> str:
            oval = self.oval
            hinted = self.queue_files(self.mounted_devices(), QUEUE_IO_OPT, r"^([1-9][0-9]*)\s*$",
                                      "SAS volumes publishing an optimal I/O size")
            names = oval.local("SAS volumes publishing an optimal I/O size (names)", capture(
                r"^/sys/block/([^/]+)/queue$", component(hinted, "path")))
            below = oval.obj("unix:file", "devices below SAS volumes with an optimal I/O size",
                             entity("unix:path", var=oval.local(
                                 "slaves directories of hinted SAS volumes",
                                 concat("/sys/block/", var(names), "/slaves")),
                                 var_check="at least one"),
                             entity("unix:filename", "^[^/]+$", op="pattern match"))
            stacked = oval.local("hinted SAS volumes on other devices", capture(
                r"^/sys/block/([^/]+)/slaves$", component(below, "path")))
            return oval.union_values("striped SAS volumes (and '/')", [
                stacked, oval.constant("no device's name", ["/"])])
        return self.once("striped", build)
