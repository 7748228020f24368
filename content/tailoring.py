"""XCCDF 1.2 tailoring files: one site configuration for both engines.

``sascheck tailor`` writes the values the scanner would use on a host (profile, --set,
and SAS directories discovered from sasv9.cfg) as a tailored profile; ``sascheck scan
--tailoring`` reads the same file back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lxml import etree

from ..rules import Catalogue
from ..rules.errors import UserInputError
from .xccdf import ID_PREFIX, NS_XCCDF, profile_id, value_id, value_text

TAILORED_SUFFIX = "_tailored"
# oscap xccdf generate fix copies a set-value into the script and playbook it writes
# verbatim (checked with oscap 1.3.7): inside the bash fix's single quotes a ' ends the
# quote, and in the playbook's YAML strings " and \ end or escape them and {{ or {% are
# templated by Ansible. A value holding one of these (or a line break) would be code there,
# so sascheck never writes one; a comma would split a list item.
_VERBATIM_UNSAFE = frozenset("'\"\\{}%\n\r")


class TailoringError(UserInputError):
    """A tailoring file that cannot be used, with the reason."""


def tailored_profile_id(profile: str) -> str:
    return profile_id(profile + TAILORED_SUFFIX)


def write_tailoring(catalogue: Catalogue, profile: str, values: Mapping[str, Any],
                    when: datetime, benchmark_href: str | None = None) -> bytes:
    def sub(parent: etree._Element, tag: str, text: str | None = None,
            **attrs: str) -> etree._Element:
        child = etree.SubElement(parent, f"{{{NS_XCCDF}}}{tag}", attrs)
        if text is not None:
            child.text = text
        return child

    root = etree.Element(f"{{{NS_XCCDF}}}Tailoring", nsmap={"xccdf": NS_XCCDF},
                         id=f"{ID_PREFIX}tailoring_{profile}")
    if benchmark_href:
        sub(root, "benchmark", href=benchmark_href)
    sub(root, "version", "1", time=when.strftime("%Y-%m-%dT%H:%M:%S"))
    tailored = sub(root, "Profile", id=tailored_profile_id(profile),
                   extends=profile_id(profile))
    sub(tailored, "title", f"{catalogue.profile(profile).title}, tailored for this site")
    sub(tailored, "description", "Written by sascheck tailor from the same values sascheck "
                                 "scan uses, SAS directories included.")
    for name, variable in catalogue.variables.items():
        value = values[name]
        for item in value if isinstance(value, list) else [value]:
            text = str(item)
            if _VERBATIM_UNSAFE & set(text) or (isinstance(value, list) and "," in text):
                raise TailoringError(
                    f"site value {name}: {text!r} holds a character (' \" \\ {{ }} % a comma "
                    "or a line break) that oscap xccdf generate fix would copy verbatim into "
                    "the fix script and playbook it writes, where it would be code: no "
                    "tailoring file written (rename the directory, or leave the value out)")
        sub(tailored, "set-value", value_text(variable, value), idref=value_id(name))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


@dataclass(frozen=True)
class Tailoring:
    profile: str  # the profile it extends
    values: dict[str, str]  # site value name -> text, as --set takes it


MAX_TAILORING_BYTES = 16 << 20  # a tailoring file is a few KiB; refuse a flood before parsing


def read_tailoring(catalogue: Catalogue, path: str) -> Tailoring:
    """The profile and values of a tailoring file. The values are strings as written: the
    caller passes them through the same validation as ``--set``."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TAILORING_BYTES + 1)
        if len(data) > MAX_TAILORING_BYTES:
            raise TailoringError(f"{path}: larger than {MAX_TAILORING_BYTES >> 20} MiB; "
                                 "not a sascheck tailoring file")
        tree = etree.ElementTree(etree.fromstring(data, etree.XMLParser(
            resolve_entities=False, no_network=True)))
    except (OSError, etree.XMLSyntaxError) as exc:
        raise TailoringError(f"{path}: cannot read tailoring: {exc}") from exc
    profiles = tree.findall(f"{{{NS_XCCDF}}}Profile")
    if len(profiles) != 1:
        raise TailoringError(f"{path}: expected one tailored Profile, found {len(profiles)}")
    profile = profiles[0]
    extends = profile.get("extends", "")
    prefix = profile_id("")
    base = extends[len(prefix):] if extends.startswith(prefix) else ""
    if base not in catalogue.profiles:
        raise TailoringError(f"{path}:{profile.sourceline}: extends {extends!r}, "
                             "not a sascheck profile")
    values: dict[str, str] = {}
    for element in profile.iterfind(f"{{{NS_XCCDF}}}set-value"):
        idref = element.get("idref", "")
        name = idref[len(value_id("")):] if idref.startswith(value_id("")) else ""
        if name not in catalogue.variables:
            raise TailoringError(f"{path}:{element.sourceline}: unknown value {idref!r}")
        values[name] = element.text or ""
    return Tailoring(base, values)
