"""tuned's profile loader, as the installed release runs it: where it looks for a profile,
how it parses tuned.conf, how include= is followed, and how the units merge.

Each point follows tuned's own code (redhat-performance/tuned, cited by tag):

- Locating (``tuned/profiles/locator.py``): the load directories are searched from the last
  (the site's) to the first; a file already loaded is skipped, so a profile in /etc that
  includes its own name loads the package's namesake. From v2.16 a name whose every file is
  already loaded is skipped silently and ``-name`` is a conditional include; before, both
  are "Cannot find profile". The directories are ``/usr/lib/tuned``, ``/etc/tuned`` until
  v2.22 (consts.LOAD_DIRECTORIES) and ``/usr/lib/tuned/profiles``, ``/etc/tuned/profiles``
  from v2.23 (CFG_DEF_PROFILE_DIRS), or tuned-main.conf's ``profile_dirs``.
- Parsing (``loader._load_config_data``): ConfigObj with ``list_values=False`` until v2.16
  (an unquoted ``#`` anywhere ends a value; a key outside a section is refused); Python's
  ConfigParser with its defaults in v2.17 and v2.18 (``=`` or ``:`` delimit, no inline
  comments, a repeated section or option refused); ``delimiters=('=')`` and
  ``inline_comment_prefixes=('#')`` from v2.19 (a ``#`` after whitespace ends a value), and
  ``strict=False`` from v2.20 (repeats merge, the later wins). A file the parser refuses
  fails the whole load: tuned then applies no profile at all.
- include= (``loader._load_profile``): functions expanded (``${f:virt_check:VM:BARE}``), then
  split on ``,`` or ``;`` from v2.13 (one name before); included profiles load first.
- Merging (``tuned/profiles/merger.py``, ``tuned/units/manager.py``): each section is a unit,
  merged by name (``replace`` true starts it afresh; ``drop=`` removes options; the newer
  unit's ``enabled``, true unless it says, replaces the older's); ``[variables]`` are
  expanded in values; a unit applies only when ``enabled`` is true as the installed release
  reads it (``LoaderRules.unit_true``), its ``cpuinfo_regex`` matches /proc/cpuinfo and its
  ``uname_regex`` the host's uname.
  The stock RHEL 9 throughput-performance has a ``[vm.thunderx]`` unit of that kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...rules.host_layout import (
    TUNED_SHIPPED_PROFILES,
)
from .. import host_regex
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot
from .tuned_conf import LoaderRules, Sections, TunedConfError, parse_profile

MAX_PROFILES = 32
UNIT_CONTROLS = ("type", "enabled", "replace", "drop", "devices", "devices_udev_regex",
                 "cpuinfo_regex", "uname_regex", "script_pre", "script_post", "priority")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FUNCTION = re.compile(r"\$\{f:([A-Za-z0-9_]+)((?::[^:}]*)*)\}")
# tuned's Loader.safe_name
PROFILE_NAME = re.compile(r"[a-zA-Z0-9_.-]{1,128}")


@dataclass
class Unit:
    """One section of the merged profile: a plugin instance with its options, each with the
    profile that set it last."""
    name: str
    type: str
    controls: dict[str, str] = field(default_factory=dict)
    options: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Why tuned leaves the unit off (its enabled= as the installed tuned reads it), or "".
    disabled: str = ""


@dataclass
class HostMatch:
    """What tuned matches a unit's cpuinfo_regex and uname_regex against, and whether
    virt-what finds a virtual machine (``${f:virt_check}``); None: could not be told."""
    cpuinfo: str | None  # None: could not be read
    uname: str
    virtual: bool | None = None


@dataclass
class TunedChain:
    """Profiles in the order tuned applies them; later ones override earlier ones."""
    profiles: list[tuple[str, str]] = field(default_factory=list)  # (name, file)
    units: dict[str, Unit] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # units that do not apply here, and why
    problems: list[str] = field(default_factory=list)
    unreadable: bool = False  # a profile exists but could not be read (or evaluated)
    # tuned refuses the load (a profile its parser rejects, an include it cannot find):
    # it then applies no profile at all. The reason, or "".
    failed: str = ""
    host: HostMatch | None = None

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.profiles]

    def applies(self, unit: Unit) -> str | None:
        """Why ``unit`` does not apply on this host, or None when it does."""
        if unit.disabled:
            return unit.disabled
        host = self.host or HostMatch(None, "")
        for control, subject in (("cpuinfo_regex", host.cpuinfo), ("uname_regex", host.uname)):
            pattern = unit.controls.get(control)
            if pattern is None:
                continue
            if subject is None:
                return f"{control}: /proc/cpuinfo is missing or unreadable"
            try:  # the host wrote this expression: RE2 runs it in linear time
                if not host_regex.search(self.expand(pattern), subject, multiline=True):
                    return f"{control} does not match this host"
            except host_regex.HostRegexError as exc:
                return f"{control} cannot be evaluated safely ({exc})"
        return None

    def expand(self, value: str) -> str:
        """``${name}`` replaced from [variables], then tuned's functions where sascheck
        can evaluate them (``virt_check``); others are left as written."""
        value = _VARIABLE.sub(lambda m: self.variables.get(m.group(1), m.group(0)), value)
        return expand_functions(value, self.host)[0]

    def not_applied(self, plugin: str, key: str) -> list[tuple[str, str, str, str]]:
        """(unit, value, profile, why not) for units of ``plugin`` that set ``key`` but do
        not apply on this host."""
        found = []
        for unit in self.units.values():
            if unit.type == plugin and key in unit.options:
                why = self.applies(unit)
                if why is not None:
                    value, profile = unit.options[key]
                    found.append((unit.name, self.expand(value), profile, why))
        return found

    def setting(self, plugin: str, key: str) -> tuple[str, str] | None:
        """(value, profile that set it) for a plugin option, e.g. ('disk', 'readahead'): the
        last unit of that plugin type that applies here and sets it."""
        found: tuple[str, str] | None = None
        for unit in self.units.values():
            if unit.type == plugin and key in unit.options and self.applies(unit) is None:
                value, profile = unit.options[key]
                found = (self.expand(value), profile)
        return found


def expand_functions(value: str, host: HostMatch | None) -> tuple[str, list[str]]:
    """``${f:virt_check:VM:BARE}`` as tuned's function (virt-what prints something inside a
    virtual machine or container: the first argument; otherwise the second). Returns the
    text and the functions left unevaluated."""
    unevaluated: list[str] = []

    def call(match: re.Match) -> str:
        args = match.group(2)[1:].split(":") if match.group(2) else []
        if match.group(1) == "virt_check" and len(args) == 2 and host is not None \
                and host.virtual is not None:
            return args[0] if host.virtual else args[1]
        unevaluated.append(match.group(0))
        return match.group(0)

    return _FUNCTION.sub(call, value), unevaluated


def include_names(value: str, rules: LoaderRules) -> list[str]:
    """include= split as the installed tuned splits it."""
    if not rules.include_list:
        return [value.strip()] if value.strip() else []
    return [name for name in re.split(r"\s*[,;]\s*", value.strip()) if name]


def _locate(root: HostRoot, name: str, loaded: list[str], rules: LoaderRules) -> str | None:
    """The file tuned loads for ``name``: "" when it is skipped, None when tuned cannot find
    it (locator.get_config). FactError when a directory cannot be searched."""
    conditional = rules.skip_loaded_silently and name.startswith("-")
    name = name[1:] if conditional else name
    skipped = None
    base = name.rsplit("/", 1)[-1]  # locator's basename: no way out of the directory
    if base in ("", ".", ".."):
        return "" if conditional else None
    for directory in rules.load_dirs:
        path = f"{directory}/{base}/tuned.conf"
        if path in loaded:
            skipped = "" if rules.skip_loaded_silently else None
            continue
        if root.probe(path) and not root.is_dir(path):
            return path
    return "" if conditional and skipped is None else skipped


def resolve_chain(root: HostRoot, active: list[str], host: HostMatch | None = None,
                  rules: LoaderRules | None = None) -> TunedChain:
    rules = rules or LoaderRules.for_host(root, None)
    chain = TunedChain(host=host)
    loaded: list[str] = []

    def load(names: list[str], depth: int) -> None:
        for name in names:
            if chain.failed or chain.unreadable:
                return
            if len(loaded) >= MAX_PROFILES or depth >= MAX_PROFILES:
                chain.problems.append(f"more than {MAX_PROFILES} profiles in the chain")
                chain.unreadable = True
                return
            try:
                path = _locate(root, name, loaded, rules)
            except FactError as exc:
                chain.problems.append(str(exc))
                chain.unreadable = True
                return
            if path == "":
                base = name.lstrip("-")
                chain.problems.append(
                    f"include cycle: '{base}' is already loaded, so tuned skips it"
                    if any(f"{d}/{base}/tuned.conf" in loaded for d in rules.load_dirs)
                    else f"conditional include '{name}' not found: skipped")
                continue
            if path is None and not root.is_dir(TUNED_SHIPPED_PROFILES):
                # a copy without the package's directory (a sosreport): not collected
                chain.problems.append(f"profile '{name}' is not in this copy of the host")
                continue
            if path is None:
                chain.failed = (f"tuned cannot find profile '{name}' in "
                                f"{' or '.join(rules.load_dirs)}")
                return
            loaded.append(path)
            try:
                sections = parse_profile(root.read_text(path, 1024 * 1024), rules)
            except FactError as exc:
                chain.problems.append(str(exc))
                chain.unreadable = True
                return
            except TunedConfError as exc:
                chain.failed = f"tuned cannot parse {path}: {exc}"
                return
            include = sections.get("main", {}).pop("include", None)
            if include is not None:
                expanded, unevaluated = expand_functions(include, host)
                if unevaluated:
                    chain.problems.append(f"{path}: include={include} calls "
                                          f"{', '.join(unevaluated)}, which sascheck "
                                          "cannot evaluate")
                    chain.unreadable = True
                    return
                load(include_names(expanded, rules), depth + 1)
            chain.profiles.append((name.lstrip("-"), path))
            _merge(chain, name.lstrip("-"), sections, rules.unit_true)

    load([name for name in active if PROFILE_NAME.fullmatch(name)], 0)
    if chain.failed:
        chain.problems.append(chain.failed + ": it applies no profile")
        chain.units = {}
    chain.skipped = [f"[{unit.name}] in {_origin(unit)}: {why}"
                     for unit in chain.units.values()
                     if unit.options and (why := chain.applies(unit)) is not None]
    return chain


def _origin(unit: Unit) -> str:
    return ", ".join(dict.fromkeys(profile for _, profile in unit.options.values()))


def _disabled(controls: dict[str, str], true: tuple[str, ...]) -> str:
    """Why a unit with these controls is off in a tuned taking ``true`` as true, or ""."""
    text = controls.get("enabled")
    if text is None or text in true:
        return ""
    if text.strip().lower() in ("false", "0", "no", "off", "n"):
        return f"enabled={text}"
    return f"enabled={text}, which this tuned reads as false (true is only {', '.join(true)})"


def _merge(chain: TunedChain, profile: str, sections: Sections, true: tuple[str, ...]) -> None:
    """Merge one profile's sections into the chain's units, as tuned's Merger does
    (tuned/profiles/merger.py): a unit of the newer profile takes over the type (its own
    name unless it says), enabled (true unless it says) and devices (``*`` unless it says:
    tuned/profiles/unit.py's default, the same from 2.3 to 2.28) of the older one."""
    for section, options in sections.items():
        if section == "main":
            continue
        if section == "variables":
            chain.variables.update(options)
            continue
        controls = {k: v for k, v in options.items() if k in UNIT_CONTROLS}
        values = {k: (v, profile) for k, v in options.items() if k not in UNIT_CONTROLS}
        unit = chain.units.get(section)
        if unit is None or controls.get("replace") in true:
            chain.units[section] = Unit(section, controls.get("type", section), controls, values,
                                        _disabled(controls, true))
            continue
        unit.type = controls.get("type", section)
        unit.disabled = _disabled(controls, true)
        unit.controls.update(controls)
        if "devices" not in controls:  # Merger._merge_two: units[name].devices = unit.devices
            unit.controls.pop("devices", None)
        for dropped in re.split(r"[,\s]+", controls.get("drop", "")):
            unit.options.pop(dropped, None)
        unit.options.update(values)
