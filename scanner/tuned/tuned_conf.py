"""tuned.conf as the installed tuned release parses it, and where its loader looks for
profiles: LoaderRules holds each release's choices (chain.py cites them), parse_profile
reads a file with them."""

from __future__ import annotations

import configparser
from dataclasses import dataclass

from ...rules.host_layout import TUNED_MAIN_CONF
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot
from .layout import NEW_LAYOUT_SINCE, TunedLayout, tuned_layout

# ConfigObj's _nolistvalue (configobj 5.0): with list_values=False a value is a quoted
# string kept as written, or unquoted text up to the first '#'.
_CONFIGOBJ_VALUE = re.compile(r"""^((?:".*?")|(?:'.*?')|(?:[^'"#].*?)|(?:))\s*(#.*)?$""")
MAX_CONFIGOBJ_VALUE = 4096  # tuned's longest shipped value (a cmdline) is under 300
_CONFIGOBJ_SECTION = re.compile(r"^\[([^\]]*)\]\s*(#.*)?$")

Sections = dict[str, dict[str, str]]
Version = tuple[int, int, int]


class TunedConfError(ValueError):
    """tuned.conf that the installed tuned's parser refuses."""


@dataclass(frozen=True)
class LoaderRules:
    """What the installed tuned's loader does; an unknown version is taken as the newest,
    with the directories of the layout the host has."""
    configobj: bool = False  # until v2.16
    delimiters: tuple[str, ...] = ("=",)  # ("=", ":") in v2.17 and v2.18
    inline_comments: bool = True  # v2.19+
    strict: bool = False  # v2.17 to v2.19 refuse repeated sections and options
    include_list: bool = True  # v2.13+
    skip_loaded_silently: bool = True  # v2.16+: also '-name' conditional includes
    load_dirs: tuple[str, ...] = ()  # highest priority first
    # The texts a unit's enabled= and replace= are true for (tuned/profiles/unit.py compares
    # the text with a list: [True, "true", 1] to v2.10, "1" added in v2.11 (commit 2b543b0),
    # "True" in v2.13 (d6f0a09)); anything else, yes and on included, is false.
    unit_true: tuple[str, ...] = ("True", "true", "1")

    @classmethod
    def for_host(cls, root: HostRoot, version: Version | None,
                 layout: TunedLayout | None = None) -> LoaderRules:
        """``layout``: where this tuned keeps profiles (scanner/tuned/layout.py); from 2.23 on
        (or an unknown release) tuned-main.conf's profile_dirs replaces it."""
        layout = layout or tuned_layout(root, version, "")
        dirs = [layout.system, layout.user]
        if version is None or version[:2] >= NEW_LAYOUT_SINCE:
            dirs = _profile_dirs_setting(root) or dirs
        if version is None:
            return cls(load_dirs=tuple(reversed(dirs)))
        release = version[:2]
        return cls(configobj=release < (2, 17),
                   delimiters=("=",) if release >= (2, 19) else ("=", ":"),
                   inline_comments=release >= (2, 19), strict=release < (2, 20),
                   include_list=release >= (2, 13), skip_loaded_silently=release >= (2, 16),
                   load_dirs=tuple(reversed(dirs)),
                   unit_true=(("true",) if release < (2, 11) else ("true", "1")
                              if release < (2, 13) else ("True", "true", "1")))


def _profile_dirs_setting(root: HostRoot) -> list[str]:
    """tuned-main.conf's ``profile_dirs`` (v2.23+), lowest priority first, or []."""
    try:
        text = root.read_optional(TUNED_MAIN_CONF, 65536) or ""
    except FactError:
        return []
    match = re.search(r"^[ \t]*profile_dirs[ \t]*=[ \t]*([^\n#]*)", text, re.MULTILINE)
    if not match:
        return []
    return [d.strip() for d in match.group(1).split(",")
            if d.strip().startswith("/") and ".." not in d.split("/")]


def parse_profile(text: str, rules: LoaderRules = LoaderRules()) -> Sections:
    """tuned.conf's sections as the installed tuned reads them; TunedConfError when its
    parser refuses the file."""
    return _parse_configobj(text) if rules.configobj else _parse_configparser(text, rules)


def _parse_configparser(text: str, rules: LoaderRules) -> Sections:
    parser = configparser.ConfigParser(
        delimiters=rules.delimiters, strict=rules.strict, interpolation=None,
        inline_comment_prefixes=("#",) if rules.inline_comments else None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
        return {section: {option: parser.get(section, option, raw=True)
                          for option in parser.options(section)}
                for section in parser.sections()}
    except configparser.Error as exc:
        raise TunedConfError(str(exc).splitlines()[0][:200]) from None


def _parse_configobj(text: str) -> Sections:
    sections: Sections = {}
    current: dict[str, str] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = _CONFIGOBJ_SECTION.match(line)
        if header:
            name = header.group(1).strip()
            if name in sections:
                raise TunedConfError(f"duplicate section name at line {number}")
            current = sections[name] = {}
            continue
        key, sep, value = line.partition("=")
        if len(value) > MAX_CONFIGOBJ_VALUE:  # the regular expression is quadratic in it
            raise TunedConfError(f"a value longer than {MAX_CONFIGOBJ_VALUE} characters at "
                                 f"line {number}")
        match = _CONFIGOBJ_VALUE.match(value.strip())
        if not sep or not key.strip() or not match:
            raise TunedConfError(f"invalid line at line {number}")
        if current is None:  # loader at v2.16: "Error parsing section"
            raise TunedConfError(f"a key outside any section at line {number}")
        if key.strip() in current:
            raise TunedConfError(f"duplicate keyword name at line {number}")
        current[key.strip()] = match.group(1)
    return sections
