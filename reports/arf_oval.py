"""What oscap saw, from the OVAL results inside its ARF: the scanned system's facts
(``system_info``) and, per rule, the items its check's tests collected and how each compared.

The pieces arrive in document order (results' definitions, then tests, then the system
characteristics). read_arf streams the file and hands each element here as it ends, then frees
it: nothing is kept whole, so an element with millions of children costs no memory, and what
is kept (tests per definition, items per test, entities per item, entries per file) is capped.
Everything is untrusted text: values are cut to a length.
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
MAX_ENTRIES = 50_000  # definitions, tests and comments kept per file
MAX_PER_ENTRY = 64  # items per test, entities per item
MAX_TESTS = 4096  # distinct tests per definition (sascheck's largest has some 600)
MAX_NESTING = 64  # criteria levels searched for a criterion's definition
# An item's entities that name what it is of, and those that hold what was found, in the order
# tried (textfilecontent, file, xmlfilecontent, variable and other OVAL 5.11 items).
SUBJECT_ENTITIES = ("filepath", "path", "mount_point", "var_ref", "name")
VALUE_ENTITIES = ("text", "subexpression", "value_of", "value", "mount_options", "type")
# A whole kernel release (the platform checks read /proc/sys/kernel/osrelease; the rules' own
# patterns keep only a prefix such as "2.").
RELEASE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\S*$")
SYSTEM_INFO = ("os_name", "os_version", "architecture", "primary_host_name")
# Mount options oscap's partition probe adds from statvfs(3)'s f_flag read as mount(2)'s
# MS_* flags (partition_probe.c, "Check for remount, bind and move"): f_flag holds ST_*
# flags, and MS_BIND is ST_RELATIME's bit, so every relatime mount reads as "bind"; under
# OSCAP_PROBE_ROOT the flags are even those of the scanning machine's directory. None is
# in the host's mount table: the page shows the host's own options only.
STATVFS_GUESSES = frozenset({"bind", "remount", "move"})


@dataclass(frozen=True)
class OvalItem:
    subject: str
    value: str
    result: str  # the tested item's result as oscap wrote it (true, false, not evaluated ...)
    test: str  # the test's comment


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]


def parent_tag(element: etree._Element) -> str:
    parent = element.getparent()
    return str(parent.tag) if parent is not None else ""


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
    # (tests as an ordered set)
    _criteria: dict[str, tuple[str, dict[str, None], list[str]]] = field(default_factory=dict)
    _tested: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    _comments: dict[tuple[str, str], str] = field(default_factory=dict)
    _items: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    _wanted: set[tuple[str, str]] = field(default_factory=set)

    _entities: list[tuple[str, str]] = field(default_factory=list)  # the open item's

    def ended(self, report: str, element: etree._Element) -> None:
        """Take what is needed from an element that has just ended (read_arf frees it)."""
        tag = element.tag
        parent = element.getparent()
        above = str(parent.tag) if parent is not None else ""
        if tag in (f"{NS_RES}criterion", f"{NS_RES}extend_definition"):
            self._criterion(report, element)
        elif tag == f"{NS_RES}tested_item" and parent is not None and above == f"{NS_RES}test":
            tested = self._tested.get((report, str(parent.get("test_id", ""))))
            if tested is None and len(self._tested) < MAX_ENTRIES:
                tested = self._tested.setdefault((report, str(parent.get("test_id", ""))), [])
            if tested is not None and len(tested) < MAX_PER_ENTRY:
                item = (str(element.get("item_id", "")), _cut(element.get("result")))
                tested.append(item)
                if len(self._wanted) < MAX_ITEMS:
                    self._wanted.add((report, item[0]))
        elif above in (f"{NS_DEF}tests", f"{NS_DEF}variables"):
            if len(self._comments) < MAX_ENTRIES:
                self._comments[(report, str(element.get("id", "")))] = _cut(
                    element.get("comment"))
        elif above == f"{NS_SC}system_info":
            if _local(tag) in SYSTEM_INFO:
                self.system[_local(tag)] = _cut(element.text)
        elif above == f"{NS_SC}system_data":
            self._item(report, element)
        elif (parent is not None and parent_tag(parent) == f"{NS_SC}system_data"
              and len(self._entities) < MAX_PER_ENTRY):  # an entity of the open item
            self._entities.append((_local(tag), element.text or ""))

    def _criterion(self, report: str, element: etree._Element) -> None:
        definition = element.getparent()
        for _level in range(MAX_NESTING):
            if definition is None or definition.tag == f"{NS_RES}definition":
                break
            definition = definition.getparent()
        if definition is None or definition.tag != f"{NS_RES}definition":
            return
        definition_id = str(definition.get("definition_id", ""))
        if definition_id not in self._criteria:
            if len(self._criteria) >= MAX_ENTRIES:
                return
            self._criteria[definition_id] = (report, {}, [])
        owner, tests, extends = self._criteria[definition_id]
        if owner != report:  # the id again in another OVAL document: the first counts
            return
        test = str(element.get("test_ref", ""))
        if element.tag == f"{NS_RES}criterion" and len(tests) < MAX_TESTS:
            tests[test] = None
        elif element.tag == f"{NS_RES}extend_definition" and len(extends) < MAX_PER_ENTRY:
            extends.append(str(element.get("definition_ref", "")))

    def _item(self, report: str, item: etree._Element) -> None:
        key = (report, str(item.get("id", "")))
        subject, value = self._describe(self._entities, _local(item.tag))
        self._entities = []
        if key in self._wanted:
            self._items[key] = (self._comments.get((report, subject), subject), value)
        if subject == KERNEL_RELEASE and RELEASE.match(value) and len(value) > len(
                self.system.get("kernel", "")):
            self.system["kernel"] = value

    @staticmethod
    def _describe(pairs: list[tuple[str, str]], kind: str) -> tuple[str, str]:
        found: dict[str, list[str]] = {}
        for name, text in pairs:  # an entity may repeat (a partition's mount_options)
            if name == "mount_options" and text in STATVFS_GUESSES:
                continue
            found.setdefault(name, []).append(text)
        entities = {name: _cut(",".join(texts)) for name, texts in found.items()}
        subject = next((entities[name] for name in SUBJECT_ENTITIES if entities.get(name)), "")
        if entities.get("path") and entities.get("filename") and not entities.get("filepath"):
            subject = f"{entities['path'].rstrip('/')}/{entities['filename']}"
        value = next((entities[name] for name in VALUE_ENTITIES if entities.get(name)), "")
        return subject or kind, value

    def items_of(self, definition: str) -> list[OvalItem]:
        """The items a definition's tests (and those of definitions it extends) compared,
        those that did not match their state first."""
        found: list[OvalItem] = []
        seen: set[str] = set()

        def walk(definition_id: str, depth: int) -> None:
            if definition_id in seen or depth > MAX_DEPTH:
                return
            seen.add(definition_id)
            report, tests, extends = self._criteria.get(definition_id, ("", {}, []))
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
