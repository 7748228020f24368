"""Assemble the SCAP 1.3 source data stream: XCCDF, OVAL, CPE dictionary and CPE OVAL,
with the catalogs that tie their hrefs together. Written here rather than with
``oscap ds sds-compose``, which labels its output SCAP 1.2."""

from __future__ import annotations

from collections.abc import Mapping

from lxml import etree

from .platforms import Fact

NS_DS = "http://scap.nist.gov/schema/scap/source/1.2"
NS_XLINK = "http://www.w3.org/1999/xlink"
NS_CATALOG = "urn:oasis:names:tc:entity:xmlns:xml:catalog"
NS_CPE_DICT = "http://cpe.mitre.org/dictionary/2.0"
PREFIX = "scap_org.sascheck"
OVAL_SYSTEM = "http://oval.mitre.org/XMLSchema/oval-definitions-5"

XCCDF_FILE = "sascheck-xccdf.xml"
OVAL_FILE = "sascheck-oval.xml"
CPE_DICT_FILE = "sascheck-cpe-dictionary.xml"
CPE_OVAL_FILE = "sascheck-cpe-oval.xml"
def cpe_dictionary(facts: Mapping[str, Fact], timestamp: str) -> etree._Element:
    root = etree.Element(f"{{{NS_CPE_DICT}}}cpe-list",
                         nsmap={None: NS_CPE_DICT})  # type: ignore[dict-item]
    generator = etree.SubElement(root, f"{{{NS_CPE_DICT}}}generator")
    etree.SubElement(generator, f"{{{NS_CPE_DICT}}}product_name").text = "sascheck"
    etree.SubElement(generator, f"{{{NS_CPE_DICT}}}schema_version").text = "2.3"
    etree.SubElement(generator, f"{{{NS_CPE_DICT}}}timestamp").text = timestamp
    for fact in facts.values():
        item = etree.SubElement(root, f"{{{NS_CPE_DICT}}}cpe-item", name=fact.cpe)
        etree.SubElement(item, f"{{{NS_CPE_DICT}}}title",
                         {"{http://www.w3.org/XML/1998/namespace}lang": "en-US"}).text = fact.title
        etree.SubElement(item, f"{{{NS_CPE_DICT}}}check", system=OVAL_SYSTEM,
                         href=CPE_OVAL_FILE).text = fact.definition
    return root


def _ref_id(name: str) -> str:
    return f"{PREFIX}_cref_{name}"


def _comp_id(name: str) -> str:
    return f"{PREFIX}_comp_{name}"


def _component_ref(parent: etree._Element, name: str,
                   catalog: Mapping[str, str] | None = None) -> None:
    ref = etree.SubElement(parent, f"{{{NS_DS}}}component-ref", id=_ref_id(name))
    ref.set(f"{{{NS_XLINK}}}href", f"#{_comp_id(name)}")
    if catalog:
        entries = etree.SubElement(ref, f"{{{NS_CATALOG}}}catalog")
        for uri_name, target in catalog.items():
            etree.SubElement(entries, f"{{{NS_CATALOG}}}uri", name=uri_name,
                             uri=f"#{_ref_id(target)}")


def data_stream(xccdf: etree._Element, oval: etree._Element, cpe_dict: etree._Element,
                cpe_oval: etree._Element, timestamp: str) -> etree._Element:
    root = etree.Element(f"{{{NS_DS}}}data-stream-collection", nsmap={
        "ds": NS_DS, "xlink": NS_XLINK, "cat": NS_CATALOG})
    root.set("id", f"{PREFIX}_collection_from_xccdf_{XCCDF_FILE}")
    root.set("schematron-version", "1.3")
    stream = etree.SubElement(root, f"{{{NS_DS}}}data-stream",
                              id=f"{PREFIX}_datastream_sascheck", timestamp=timestamp)
    stream.set("scap-version", "1.3")
    stream.set("use-case", "CONFIGURATION")
    dictionaries = etree.SubElement(stream, f"{{{NS_DS}}}dictionaries")
    _component_ref(dictionaries, CPE_DICT_FILE, {CPE_OVAL_FILE: CPE_OVAL_FILE})
    checklists = etree.SubElement(stream, f"{{{NS_DS}}}checklists")
    _component_ref(checklists, XCCDF_FILE, {OVAL_FILE: OVAL_FILE, CPE_DICT_FILE: CPE_DICT_FILE})
    checks = etree.SubElement(stream, f"{{{NS_DS}}}checks")
    _component_ref(checks, OVAL_FILE)
    _component_ref(checks, CPE_OVAL_FILE)
    for name, content in ((CPE_OVAL_FILE, cpe_oval), (OVAL_FILE, oval),
                          (CPE_DICT_FILE, cpe_dict), (XCCDF_FILE, xccdf)):
        component = etree.SubElement(root, f"{{{NS_DS}}}component", id=_comp_id(name),
                                     timestamp=timestamp)
        component.append(content)
        if name in (OVAL_FILE, CPE_OVAL_FILE):
            _one_element_per_line(component)
    return root


def _one_element_per_line(component: etree._Element) -> None:
    """OVAL without indentation: an ARF holds the data stream, so its indentation was some
    170 KB of every scan's results (#66). A line break stays between elements: oscap 1.3.7
    crashes (SIGSEGV) on this OVAL with no text at all between its elements. Any text node
    in an element turns libxml2's pretty printing off inside it, so these line breaks are
    all the spacing written. Only blank text is touched: a leaf's own text stays."""
    component.text = "\n"
    for element in component.iter():
        if len(element) and not (element.text or "").strip():
            element.text = "\n"
            for child in element:
                if not (child.tail or "").strip():
                    child.tail = "\n"
