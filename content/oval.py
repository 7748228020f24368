"""A small builder for OVAL 5.11 definitions: ids, entities, variables, criteria.

Identical objects, states, tests and variables are stored once (content-addressed),
so rules that share machinery (the SAS file systems, the tuned chain) share ids.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lxml import etree

from ..rules.host_layout import OS_NAMES, OS_PLATFORMS

NS_OVAL = "http://oval.mitre.org/XMLSchema/oval-definitions-5"
NS_COMMON = "http://oval.mitre.org/XMLSchema/oval-common-5"
NS_IND = "http://oval.mitre.org/XMLSchema/oval-definitions-5#independent"
NS_UNIX = "http://oval.mitre.org/XMLSchema/oval-definitions-5#unix"
NS_LINUX = "http://oval.mitre.org/XMLSchema/oval-definitions-5#linux"
NSMAP = {None: NS_OVAL, "oval": NS_COMMON, "ind": NS_IND, "unix": NS_UNIX, "linux": NS_LINUX}
PREFIX = {"ind": NS_IND, "unix": NS_UNIX, "linux": NS_LINUX, "": NS_OVAL}

Element = etree._Element


def q(name: str) -> str:
    """'ind:path' -> '{namespace}path'; a bare name is in the OVAL definitions namespace."""
    prefix, _, local = name.rpartition(":")
    return f"{{{PREFIX[prefix]}}}{local}"


def el(name: str, text: str | None = None, **attrs: str | None) -> Element:
    element = etree.Element(q(name))
    for key, value in attrs.items():
        if value is not None:
            element.set(key.rstrip("_"), value)
    if text is not None:
        element.text = text
    return element


def entity(name: str, value: str | None = None, *, op: str | None = None,
           datatype: str | None = None, var: str | None = None, var_check: str | None = None,
           entity_check: str | None = None, nil: bool = False) -> Element:
    """An object or state entity: a literal value, or ``var`` (a variable id) to compare with."""
    element = el(name, value, operation=op, datatype=datatype, var_ref=var,
                 var_check=var_check if var else None, entity_check=entity_check)
    if nil:
        element.set("{http://www.w3.org/2001/XMLSchema-instance}nil", "true")
    return element


# -- variable components -----------------------------------------------------------------
def literal(text: str, datatype: str | None = None) -> Element:
    return el("literal_component", text, datatype=datatype)


def var(variable_id: str) -> Element:
    return el("variable_component", var_ref=variable_id)


def component(object_id: str, field_name: str) -> Element:
    return el("object_component", object_ref=object_id, item_field=field_name)


def _with(name: str, children: Iterable[Element], **attrs: str) -> Element:
    element = el(name, **attrs)
    element.extend(children)
    return element


def concat(*parts: Element | str) -> Element:
    """Concatenation; multi-valued parts combine as a cartesian product (OVAL semantics)."""
    return _with("concat", [literal(p) if isinstance(p, str) else p for p in parts])


def capture(pattern: str, part: Element) -> Element:
    """The first subexpression of ``pattern`` in each value ('' where it does not match)."""
    return _with("regex_capture", [part], pattern=pattern)


def split(delimiter: str, part: Element) -> Element:
    return _with("split", [part], delimiter=delimiter)


def listed(values: Sequence[str], separator: str) -> Element:
    """Constant values as a multi-valued component, not a variable: a split of one literal.
    oscap lists a variable's values with every object and test built on it, and those of
    each variable it is built from; a component inside the variable that uses it is not
    listed (#66)."""
    if any(separator in value for value in values):
        raise ValueError(f"a value holds the separator {separator!r}")
    return split(separator, literal(separator.join(values)))


def escape_regex(part: Element) -> Element:
    return _with("escape_regex", [part])


def unique(part: Element) -> Element:
    return _with("unique", [part])


def substring(part: Element, start: int = 1, length: int = 0) -> Element:
    """The default: the empty string of each value (a marker that exists where it does)."""
    return _with("substring", [part], substring_start=str(start), substring_length=str(length))


def count(part: Element) -> Element:
    return _with("count", [part])


def arithmetic(operation: str, *parts: Element) -> Element:
    return _with("arithmetic", parts, arithmetic_operation=operation)


def set_node(members: Sequence[str | Element],
             filters: Sequence[tuple[str, str]] = ()) -> Element:
    """One UNION <set> of one or two object ids, or of one or two nested sets, then its
    filters (action, state id), which apply to this branch only."""
    element = el("set", set_operator="UNION")
    for member in members:
        element.append(el("object_reference", member) if isinstance(member, str)
                       else copy.deepcopy(member))
    for action, state_id in filters:
        element.append(el("filter", state_id, action=action))
    return element


# -- criteria ----------------------------------------------------------------------------
def criterion(test_id: str, negate: bool = False) -> Element:
    return el("criterion", test_ref=test_id, negate="true" if negate else None)


def criteria(operator: str, *children: Element, negate: bool = False,
             comment: str | None = None) -> Element:
    element = el("criteria", operator=operator, negate="true" if negate else None,
                 comment=comment)
    # lxml moves an element on append; criteria are reused in several places, so copy.
    element.extend(copy.deepcopy(c) for c in children)
    return element


def all_of(*children: Element, comment: str | None = None) -> Element:
    return criteria("AND", *children, comment=comment)


def any_of(*children: Element, comment: str | None = None) -> Element:
    return criteria("OR", *children, comment=comment)


def none_of(*children: Element, comment: str | None = None) -> Element:
    return criteria("OR", *children, negate=True, comment=comment)


def part_definition(title: str, criteria: Element) -> Element:
    """A miscellaneous definition holding ``criteria`` that other definitions extend."""
    definition = el("definition", **{"class": "miscellaneous"})
    metadata = el("metadata")
    metadata.append(el("title", title))
    metadata.append(el("description", "A part of other definitions."))
    definition.append(metadata)
    definition.append(criteria)
    return definition


@dataclass
class OvalDocument:
    """Collects definitions, tests, objects, states and variables with stable ids."""
    namespace: str = "org.sascheck"
    first_id: int = 1
    _sections: dict[str, list[Element]] = field(default_factory=lambda: {
        "def": [], "tst": [], "obj": [], "ste": [], "var": []})
    _by_content: dict[bytes, str] = field(default_factory=dict)
    _counter: dict[str, int] = field(default_factory=dict)

    def _add(self, kind: str, element: Element, comment: str | None) -> str:
        key = kind.encode() + etree.tostring(element, method="c14n")
        if etree.QName(element).localname == "external_variable":
            key += (comment or "").encode()  # externals differ only by the value they bind
        if key in self._by_content:
            return self._by_content[key]
        number = self._counter.get(kind, self.first_id)
        self._counter[kind] = number + 1
        identifier = f"oval:{self.namespace}:{kind}:{number}"
        element.set("id", identifier)
        element.set("version", "1")
        if comment:
            element.set("comment", comment)
        self._sections[kind].append(element)
        self._by_content[key] = identifier
        return identifier

    # -- variables -------------------------------------------------------------------
    def external(self, name: str, datatype: str = "string") -> str:
        return self._add("var", el("external_variable", datatype=datatype), name)

    def local(self, comment: str, expression: Element, datatype: str = "string") -> str:
        element = el("local_variable", datatype=datatype)
        element.append(expression)
        return self._add("var", element, comment)

    def constant(self, comment: str, values: Sequence[str], datatype: str = "string") -> str:
        element = el("constant_variable", datatype=datatype)
        for value in values:
            element.append(el("value", value))
        return self._add("var", element, comment)

    # -- objects, states, tests ----------------------------------------------------------
    def obj(self, kind: str, comment: str, *entities: Element,
            filters: Sequence[tuple[str, str]] = (), behaviors: dict[str, str] | None = None,
            set_of: tuple[str, ...] | None = None, set_tree: Element | None = None) -> str:
        """``kind`` like 'ind:textfilecontent54'; ``filters`` are (action, state id);
        ``set_tree`` a <set> built with set_node (filters of its own on each branch)."""
        element = el(f"{kind}_object")
        if behaviors:
            element.append(el(f"{kind.split(':')[0]}:behaviors", **behaviors))
        # Filters belong to the set when the object is a set, else to the object.
        holder = element
        if set_tree is not None:
            holder = set_tree
            element.append(holder)
        elif set_of is not None:
            holder = self._set(set_of)
            element.append(holder)
        element.extend(entities)
        for action, state_id in filters:
            holder.append(el("filter", state_id, action=action))
        return self._add("obj", element, comment)

    def paths(self, comment: str, paths: Sequence[str]) -> str:
        """A constant list of paths. Objects name files through it rather than with a
        path regex, which would make the probe walk the whole tree from /."""
        return self.constant(comment, paths)

    def _set(self, objects: tuple[str, ...]) -> Element:
        """A UNION of any number of objects of one type (OVAL nests sets two at a time)."""
        if len(objects) <= 2:
            return set_node(objects)
        middle = len(objects) // 2
        return set_node([self._set(objects[:middle]), self._set(objects[middle:])])

    def state(self, kind: str, comment: str, *entities: Element) -> str:
        element = el(f"{kind}_state")
        element.extend(entities)
        return self._add("ste", element, comment)

    def test(self, kind: str, comment: str, object_id: str, state_id: str | None = None, *,
             check: str = "all", existence: str = "at_least_one_exists") -> str:
        prefix = kind.split(":")[0]
        element = el(f"{kind}_test", check=check, check_existence=existence)
        element.append(el(f"{prefix}:object", object_ref=object_id))
        if state_id:
            element.append(el(f"{prefix}:state", state_ref=state_id))
        return self._add("tst", element, comment)

    def definition(self, title: str, description: str, body: Element,
                   klass: str = "compliance", references: Sequence[tuple[str, str]] = ()
                   ) -> str:
        element = el("definition", **{"class": klass})
        metadata = el("metadata")
        metadata.append(el("title", title))
        # One platform per distribution, not per release: 27 lines in each definition were
        # some 80 KB of an ARF (#66); the XCCDF platform names the releases.
        affected = el("affected", family="unix")
        affected.extend(el("platform", name) for name in dict.fromkeys(
            OS_NAMES[os_id] for os_id, *_ in OS_PLATFORMS))
        metadata.append(affected)
        for source, ref_id in references:
            metadata.append(el("reference", source=source, ref_id=ref_id))
        metadata.append(el("description", description))
        element.append(metadata)
        element.append(copy.deepcopy(body) if etree.QName(body).localname == "criteria"
                       else all_of(body))
        return self._add("def", element, None)

    def extension(self, title: str, body: Element) -> Element:
        """A criteria tree that several definitions hold, stored once as a definition of its
        own and named with <extend_definition>: oscap's results repeat every criterion of
        a tree in each definition that holds it, and so does the data stream (#66)."""
        criteria = copy.deepcopy(body) if etree.QName(body).localname == "criteria" \
            else all_of(body)
        return el("extend_definition",
                  definition_ref=self._add("def", part_definition(title, criteria), None),
                  comment=title)

    def share_repeated_criteria(self) -> int:
        """Store each criteria tree that several definitions hold once (content/oval_share.py)."""
        from .oval_share import share_repeated_criteria  # it builds on this module
        return share_repeated_criteria(self._sections["def"],
                                       lambda definition: self._add("def", definition, None))

    # -- common shapes -------------------------------------------------------------------
    def values_of(self, comment: str, variable_id: str) -> str:
        """A variable_object over one variable: one item holding all its values."""
        return self.obj("ind:variable", comment, el("ind:var_ref", variable_id))

    def union_values(self, comment: str, variable_ids: Sequence[str],
                     datatype: str = "string", distinct: bool = False) -> str:
        """A variable holding the values of all ``variable_ids`` (each once: ``distinct``)."""
        if len(variable_ids) == 1:
            return variable_ids[0]
        objects = tuple(self.values_of(f"{comment}: part", v) for v in variable_ids)
        union = self.obj("ind:variable", comment, set_of=objects)
        values = component(union, "value")
        return self.local(comment, unique(values) if distinct else values, datatype=datatype)

    def has_values(self, comment: str, variable_id: str, pattern: str = ".") -> str:
        """A test that is true when the variable has a value matching ``pattern``."""
        state = self.state("ind:variable", f"{comment}: matches",
                           entity("ind:value", pattern, op="pattern match",
                                  entity_check="at least one"))
        return self.test("ind:variable", comment, self.values_of(comment, variable_id), state,
                         check="all", existence="at_least_one_exists")

    def root(self, timestamp: str) -> Element:
        document = etree.Element(q("oval_definitions"), nsmap=NSMAP)  # type: ignore[arg-type]
        generator = etree.SubElement(document, q("generator"))
        etree.SubElement(generator, f"{{{NS_COMMON}}}product_name").text = "sascheck"
        etree.SubElement(generator, f"{{{NS_COMMON}}}schema_version").text = "5.11"
        etree.SubElement(generator, f"{{{NS_COMMON}}}timestamp").text = timestamp
        for kind, tag in (("def", "definitions"), ("tst", "tests"), ("obj", "objects"),
                          ("ste", "states"), ("var", "variables")):
            if self._sections[kind]:
                section = etree.SubElement(document, q(tag))
                section.extend(self._sections[kind])
        return document
