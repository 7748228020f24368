"""The XCCDF 1.2 benchmark: values, profiles, rules with their OVAL checks and platforms."""

from __future__ import annotations

from collections.abc import Mapping

from lxml import etree

from ..rules import Catalogue, Rule, Variable
from ..rules.check_kinds import GROUPS
from ..rules.host_layout import SAS_ROLE_VALUES
from .platforms import CPE_PREFIX, facts_for, os_platform_names

NS_XCCDF = "http://checklists.nist.gov/xccdf/1.2"
NS_CPE_LANG = "http://cpe.mitre.org/language/2.0"
NS_DC = "http://purl.org/dc/elements/1.1/"
NS_XHTML = "http://www.w3.org/1999/xhtml"
OVAL_SYSTEM = "http://oval.mitre.org/XMLSchema/oval-definitions-5"
ID_PREFIX = "xccdf_org.sascheck.content_"
OVAL_HREF = "sascheck-oval.xml"
SEVERITY = {"low": "low", "medium": "medium", "high": "high"}
VALUE_TYPES = {"paths": "string", "strings": "string", "integer": "number", "boolean": "boolean"}


def rule_id(name: str) -> str:
    return f"{ID_PREFIX}rule_{name}"


def profile_id(name: str) -> str:
    return f"{ID_PREFIX}profile_{name}"


# A rule's stable identifier, kept when its title or check changes (XCCDF ident, as SSG
# gives each rule its CCE).
IDENT_SYSTEM = "https://sascheck.org/rules"


def value_id(name: str) -> str:
    return f"{ID_PREFIX}value_{name}"


def value_text(variable: Variable, value: object) -> str:
    """A site value as XCCDF text: lists comma-separated, booleans lower-case. An empty
    list is a lone comma: oscap cannot substitute an empty Value into a fix."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or ","
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def x(tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    element = etree.Element(f"{{{NS_XCCDF}}}{tag}")
    for key, value in attrs.items():
        element.set(key, value)
    if text is not None:
        element.text = text
    return element


def _sub(parent: etree._Element, tag: str, text: str | None = None,
         **attrs: str) -> etree._Element:
    child = x(tag, text, **attrs)
    parent.append(child)
    return child


def _platform_spec(catalogue: Catalogue) -> etree._Element:
    spec = etree.Element(f"{{{NS_CPE_LANG}}}platform-specification",
                         nsmap={"cpe-lang": NS_CPE_LANG})
    for rule in catalogue.rules.values():
        roles, extras = facts_for(rule)
        platform = etree.SubElement(spec, f"{{{NS_CPE_LANG}}}platform",
                                    id=f"sascheck_platform_{rule.id}")
        etree.SubElement(platform, f"{{{NS_CPE_LANG}}}title").text = \
            f"Where {rule.id} applies"
        test = etree.SubElement(platform, f"{{{NS_CPE_LANG}}}logical-test",
                                operator="AND", negate="false")
        any_role = etree.SubElement(test, f"{{{NS_CPE_LANG}}}logical-test", operator="OR",
                                    negate="false")
        for role in roles:
            etree.SubElement(any_role, f"{{{NS_CPE_LANG}}}fact-ref", name=CPE_PREFIX + role)
        for extra in extras:
            etree.SubElement(test, f"{{{NS_CPE_LANG}}}fact-ref", name=CPE_PREFIX + extra)
    return spec


def _check(definition: str, exports: list[tuple[str, str]], selector: str | None
           ) -> etree._Element:
    check = x("check", system=OVAL_SYSTEM)
    if selector:
        check.set("selector", selector)
    for oval_variable, name in exports:
        _sub(check, "check-export", **{"export-name": oval_variable, "value-id": value_id(name)})
    _sub(check, "check-content-ref", href=OVAL_HREF, name=definition)
    return check


SUB_MARK = "\x00"  # text between two marks names the site value of an XCCDF <sub>

# What each check kind's fix does to a host, in XCCDF's fix attributes (complexity,
# disruption, reboot, strategy), as SSG states them per remediation: a boot-loader change
# takes effect at the next reboot; a remount or a switch of tuned profile disturbs what
# runs; a sysctl, a scheduler or a limit for new sessions hardly does. Kinds not listed:
# DEFAULT_FIX_TRAITS.
DEFAULT_FIX_TRAITS = ("low", "low", "false", "configure")
FIX_TRAITS = {
    "thp_at_boot": ("low", "medium", "true", "configure"),  # grubby: the next boot's line
    "numa_enabled": ("low", "medium", "true", "enable"),  # numa=off out of the boot entries
    "mount_option_forbidden": ("low", "high", "false", "configure"),  # remount, fstab
    "mount_option_required": ("low", "high", "false", "configure"),
    "mount_options_at_boot": ("low", "medium", "false", "configure"),  # fstab, for the next mount
    "tuned_profile": ("medium", "medium", "false", "configure"),  # a tuned profile switch
    "tuned_cpu_latency": ("low", "medium", "false", "configure"),
    "thp_mode": ("low", "medium", "false", "disable"),  # running THP: new allocations only
    "io_tuning_at_boot": ("medium", "low", "false", "configure"),  # udev rules and tuned
}


def fix_traits(rule: Rule) -> dict[str, str]:
    complexity, disruption, reboot, strategy = FIX_TRAITS.get(rule.kind, DEFAULT_FIX_TRAITS)
    return {"complexity": complexity, "disruption": disruption, "reboot": reboot,
            "strategy": strategy}


def fix_element(rule: Rule, system: str, text: str) -> etree._Element:
    """An XCCDF <fix>; marked site values become <sub idref=...> elements."""
    kind = system.rsplit(":", 1)[-1]
    element = x("fix", system=system, id=f"{rule.id}_{kind}", **fix_traits(rule))
    parts = text.split(SUB_MARK)
    element.text = parts[0]
    for index in range(1, len(parts), 2):
        sub = _sub(element, "sub", idref=value_id(parts[index]), use="value")
        sub.tail = parts[index + 1] if index + 1 < len(parts) else ""
    return element


def _rule(rule: Rule, definition: str | None, exports: list[tuple[str, str]],
          fixes: list[tuple[str, str]]) -> etree._Element:
    element = x("Rule", id=rule_id(rule.id), selected="true", severity=SEVERITY[rule.severity],
                weight="10.000000", role="full")
    _sub(element, "title", rule.title)
    _sub(element, "description", rule.description)
    for reference in rule.references:
        if reference.source.url:
            _sub(element, "reference", reference.citation, href=reference.source.url)
        else:
            _sub(element, "reference", reference.citation)
    _sub(element, "rationale", rule.rationale)
    _sub(element, "platform", idref=f"#sascheck_platform_{rule.id}")
    _sub(element, "ident", f"SASCHECK-{rule.id}", system=IDENT_SYSTEM)
    element.extend(fix_element(rule, system, text) for system, text in fixes)
    if definition is None:
        return element  # no OVAL check (measured, or beyond OVAL): oscap says notchecked
    # SAS file-system rules too: their OVAL is an error where no SAS directory is named or
    # one named is missing (content/judgeable.py), so values set by any tailoring
    # tool take effect without selecting a check.
    element.append(_check(definition, exports, None))
    return element


def benchmark(catalogue: Catalogue, version: str, date: str,
              definitions: Mapping[str, str], exports: Mapping[str, list[tuple[str, str]]],
              fixes: Mapping[str, list[tuple[str, str]]] | None = None) -> etree._Element:
    """``exports[rule]`` lists the (OVAL external variable, site value) pairs its check needs."""
    namespaces = {None: NS_XCCDF, "xhtml": NS_XHTML, "dc": NS_DC, "cpe-lang": NS_CPE_LANG}
    root = etree.Element(f"{{{NS_XCCDF}}}Benchmark", nsmap=namespaces)  # type: ignore[arg-type]
    root.set("id", f"{ID_PREFIX}benchmark_sascheck")
    root.set("resolved", "1")
    root.set("style", "SCAP_1.3")
    root.set("{http://www.w3.org/XML/1998/namespace}lang", "en-US")
    _sub(root, "status", "draft", date=date)
    _sub(root, "title", "sascheck: Linux tuning for SAS analytics on RHEL")
    _sub(root, "description", "Checks the operating-system tuning that Red Hat and SAS "
                              "published for SAS on Red Hat Enterprise Linux: Transparent Huge "
                              "Pages, I/O schedulers, read-ahead, write barriers, noatime, file "
                              "systems, tuned, the CPU governor and persistence across reboots.")
    root.append(_platform_spec(catalogue))
    for name in os_platform_names():  # any one applies (XCCDF 1.2 section 6.2.5)
        _sub(root, "platform", idref=name)
    _sub(root, "version", version, time=f"{date}T00:00:00", update="https://sascheck.org/")
    metadata = _sub(root, "metadata")
    for tag, text in (("creator", "sascheck"), ("publisher", "sascheck"),
                      ("contributor", "sascheck developers"),
                      ("source", "https://sascheck.org/")):
        etree.SubElement(metadata, f"{{{NS_DC}}}{tag}").text = text
    for profile in catalogue.profiles.values():
        element = _sub(root, "Profile", id=profile_id(profile.name))
        _sub(element, "title", profile.title)
        _sub(element, "description", profile.description)
        for name in catalogue.rules:  # every rule, so that none is selected by default
            _sub(element, "select", idref=rule_id(name),
                 selected="true" if name in profile.rule_ids else "false")
        for name, value in profile.values.items():
            _sub(element, "set-value", value_text(catalogue.variables[name], value),
                 idref=value_id(name))
    for variable in catalogue.variables.values():
        root.append(_value(variable))
    for name, (title, kinds) in GROUPS.items():
        group = _sub(root, "Group", id=f"{ID_PREFIX}group_{name}")
        _sub(group, "title", title)
        _sub(group, "description", f"The rules that judge {title[0].lower()}{title[1:]}.")
        for rule in catalogue.rules.values():
            if rule.kind in kinds:
                group.append(_rule(rule, definitions.get(rule.id), exports[rule.id],
                                   (fixes or {}).get(rule.id, [])))
    return root


# oscap reads the SAS directories from these values only: it cannot follow sasv9.cfg.
_OSCAP_NAMES_SAS = ("Under oscap, name them here (sascheck tailor writes the directories it "
                    "discovers): with none named, or one named that the host lacks, the SAS "
                    "rules are error.")


def _value(variable: Variable) -> etree._Element:
    """An XCCDF Value an administrator can set from its title and description alone."""
    element = x("Value", id=value_id(variable.name), type=VALUE_TYPES[variable.type])
    summary = variable.description.split(". ")[0].rstrip(".")
    _sub(element, "title", f"{variable.name}: {summary}")
    how = {"paths": "Absolute paths, separated by commas; a lone comma means none.",
           "strings": "Words separated by commas.",
           "integer": "A whole number.", "boolean": "true or false."}[variable.type]
    text = variable.description
    if variable.name in SAS_ROLE_VALUES.values():
        text = f"{text} {_OSCAP_NAMES_SAS}"
    elif variable.name == "sas_config_files":
        text = f"{text} sascheck only: OVAL reads no SAS configuration, so oscap needs the " \
               "directories named in the three SAS directory values."
    _sub(element, "description", f"{text} {how}")
    _sub(element, "value", value_text(variable, variable.default))
    if variable.minimum is not None:
        _sub(element, "lower-bound", str(variable.minimum))
    if variable.maximum is not None:
        _sub(element, "upper-bound", str(variable.maximum))
    return element
