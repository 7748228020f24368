"""What oscap saw, from the OVAL results inside its ARF: the scanned system's facts
(``system_info``) and, per rule, the items its check's tests collected and how each compared.

The pieces arrive in document order (results' definitions, then tests, then the system
characteristics) and are kept in small dictionaries; read_arf streams the file and hands each
finished element here, so an ARF of any size is read in bounded memory. Everything is untrusted
text: values are cut to a length and counts capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from ..rules.host_layout import KERNEL_RELEASE

NS_RES = "{http://oval.mitre.org/XMLSchema/oval-results-5}"
NS_SC = "{http://oval.mitre.org/XMLSchema/oval-system-characteristics-5}"
NS_DEF = "{http://oval.mitre.org/XMLSchema/oval-definitions-5}"
NS_ARF = "{http://scap.nist.gov/schema/asset-reporting-format/1.1}"

MAX_ITEMS = 5000  # items kept per ARF file (each tested item once)
MAX_SHOWN = 12  # items shown per rule
MAX_VALUE = 240  # characters of one value
MAX_DEPTH = 8  # extend_definition levels followed
# An item's entities that name what it is of, and those that hold what was found, in the order
# tried (textfilecontent, file, xmlfilecontent, variable and other OVAL 5.11 items).
SUBJECT_ENTITIES = ("filepath", "path", "mount_point", "var_ref", "name")
VALUE_ENTITIES = ("text", "subexpression", "value_of", "value", "mount_options", "type")
# A whole kernel release (the platform checks read /proc/sys/kernel/osrelease; the rules' own
# patterns keep only a prefix such as "2.").
RELEASE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\S*$")
SYSTEM_INFO = ("os_name", "os_version", "architecture", "primary_host_name")


@dataclass(frozen=True)
class OvalItem:
    subject: str
    value: str
    result: str  # the tested item's result as oscap wrote it (true, false, not evaluated ...)
    test: str  # the test's comment


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]


def _cut(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 1] + "\u2026"


@dataclass
class OvalReader:
    """Collects the OVAL pieces of one ARF; tests, variables and items keyed by the ARF
    report they are in (a data stream's CPE OVAL and its checks' OVAL reuse their ids)."""
    system: dict[str, str] = field(default_factory=dict)
    # definition id -> (its ARF report, its tests, the definitions it extends); definition
    # ids differ between a data stream's OVAL documents, test and item ids do not
    _criteria: dict[str, tuple[str, list[str], list[str]]] = field(default_factory=dict)
    _tested: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    _comments: dict[tuple[str, str], str] = field(default_factory=dict)
    _items: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    _wanted: set[tuple[str, str]] = field(default_factory=set)

    @staticmethod
    def reads_whole(element: etree._Element) -> bool:
        """Whether an element's subtree must be kept until it ends (checked at its start)."""
        parent = element.getparent()
        above = str(parent.tag) if parent is not None else ""
        return ((element.tag == f"{NS_RES}definition" and above == f"{NS_RES}definitions")
                or (element.tag == f"{NS_RES}test" and above == f"{NS_RES}tests")
                or element.tag == f"{NS_SC}system_info"
                or above == f"{NS_SC}system_data")

    def ended(self, report: str, element: etree._Element) -> None:
        """Take what is needed from an element that has just ended."""
        tag = element.tag
        parent = element.getparent()
        above = str(parent.tag) if parent is not None else ""
        if tag == f"{NS_RES}definition" and above == f"{NS_RES}definitions":
            tests = [str(c.get("test_ref", "")) for c in element.iter(f"{NS_RES}criterion")]
            extends = [str(e.get("definition_ref", ""))
                       for e in element.iter(f"{NS_RES}extend_definition")]
            self._criteria.setdefault(str(element.get("definition_id", "")),
                                      (report, tests, extends))
        elif tag == f"{NS_RES}test" and above == f"{NS_RES}tests":
            tested = [(str(t.get("item_id", "")), str(t.get("result", "")))
                      for t in element.iter(f"{NS_RES}tested_item")]
            self._tested[(report, str(element.get("test_id", "")))] = tested
            for item_id, _result in tested:
                if len(self._wanted) < MAX_ITEMS:
                    self._wanted.add((report, item_id))
        elif above in (f"{NS_DEF}tests", f"{NS_DEF}variables"):
            self._comments[(report, str(element.get("id", "")))] = _cut(element.get("comment"))
        elif tag == f"{NS_SC}system_info":
            for child in element:
                if _local(child.tag) in SYSTEM_INFO:
                    self.system[_local(child.tag)] = _cut(child.text)
        elif above == f"{NS_SC}system_data":
            key = (report, str(element.get("id", "")))
            subject, value = self._describe(element)
            if key in self._wanted:
                self._items[key] = (self._comments.get((report, subject), subject), value)
            if subject == KERNEL_RELEASE and RELEASE.match(value) and len(value) > len(
                    self.system.get("kernel", "")):
                self.system["kernel"] = value

    @staticmethod
    def _describe(item: etree._Element) -> tuple[str, str]:
        found: dict[str, list[str]] = {}
        for child in item:  # an entity may repeat (a partition's mount_options)
            found.setdefault(_local(child.tag), []).append(child.text or "")
        entities = {name: _cut(",".join(texts)) for name, texts in found.items()}
        subject = next((entities[name] for name in SUBJECT_ENTITIES if entities.get(name)), "")
        if entities.get("path") and entities.get("filename") and not entities.get("filepath"):
            subject = f"{entities['path'].rstrip('/')}/{entities['filename']}"
        value = next((entities[name] for name in VALUE_ENTITIES if entities.get(name)), "")
        return subject or _local(item.tag), value

    def items_of(self, definition: str) -> list[OvalItem]:
        """The items a definition's tests (and those of definitions it extends) compared,
        those that did not match their state first."""
        found: list[OvalItem] = []
        seen: set[str] = set()

        def walk(definition_id: str, depth: int) -> None:
            if definition_id in seen or depth > MAX_DEPTH:
                return
            seen.add(definition_id)
            report, tests, extends = self._criteria.get(definition_id, ("", [], []))
            for test in tests:
                for item_id, result in self._tested.get((report, test), []):
                    item = self._items.get((report, item_id))
                    if item is not None:
                        found.append(OvalItem(item[0], item[1], result,
                                              self._comments.get((report, test), "")))
            for extended in extends:
                walk(extended, depth + 1)

        walk(definition, 0)
        found.sort(key=lambda item: item.result == "true")
        return found[:MAX_SHOWN]
