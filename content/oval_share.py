"""Criteria trees that several definitions hold, stored once.

oscap's results repeat every criterion of a definition with its result, and the ARF holds
the data stream and oscap's own copy of the definitions: a tree written into ten
definitions is paid for some thirty times per scan (#66). After the checks are built, each
criteria tree found more than once becomes a ``miscellaneous`` definition of its own and
each place that held it an ``<extend_definition>`` naming it (keeping the place's
``negate`` and comment). The verdicts cannot change: OVAL evaluates an extended definition
as the criteria it holds.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator

from lxml import etree

from .oval import Element, el, part_definition, q

# Bytes an extraction costs besides the trees it removes: the new definition's frame and
# metadata, and an <extend_definition> per place. A tree is shared only where it saves more.
DEFINITION_COST = 400
REFERENCE_COST = 120
# The root's own attributes that stay with each place rather than with the shared tree.
PLACE_ATTRIBUTES = ("negate", "comment")

CRITERIA = q("criteria")


def share_repeated_criteria(definitions: list[Element],
                            add_definition: Callable[[Element], str]) -> int:
    """Replace repeated criteria trees of ``definitions`` (each definition's own top-level
    criteria excepted) with extensions made by ``add_definition``; the count of trees
    shared. The tree saving the most bytes goes first, then the others are counted again."""
    shared = 0
    while True:
        groups = _repeated_trees(definitions)
        best = max(groups.values(), key=_saving, default=None)
        if best is None or _saving(best) <= 0:
            return shared
        identifier = add_definition(_shared_definition(best))
        for place in best:
            reference = el("extend_definition", definition_ref=identifier,
                           negate=place.get("negate"), comment=place.get("comment"))
            reference.tail = place.tail
            parent = place.getparent()
            assert parent is not None
            parent.replace(place, reference)
        shared += 1


def _repeated_trees(definitions: list[Element]) -> dict[int, list[Element]]:
    """The criteria that occur more than once, grouped by shape (their root's place
    attributes aside). Shapes are numbered bottom-up and a subtree's number is kept, so
    each node is read a few times, not once per tree above it."""
    numbers: dict[tuple[object, ...], int] = {}
    whole: dict[Element, int] = {}  # a node's shape with all its attributes
    groups: dict[int, list[Element]] = {}

    def shape(node: Element, at_root: bool) -> int:
        if not at_root and node in whole:
            return whole[node]
        attributes = tuple(sorted((k, v) for k, v in node.attrib.items()
                                  if not (at_root and k in PLACE_ATTRIBUTES)))
        key = (node.tag, attributes, tuple(shape(child, False) for child in _elements(node)))
        number = numbers.setdefault(key, len(numbers))
        if not at_root:
            whole[node] = number
        return number

    for definition in definitions:
        top = definition.find(CRITERIA)
        if top is None:
            continue
        for node in top.iter(CRITERIA):
            if node is not top:
                groups.setdefault(shape(node, True), []).append(node)
    return {number: places for number, places in groups.items() if len(places) > 1}


def _elements(node: Element) -> Iterator[Element]:
    return (child for child in node if isinstance(child.tag, str))


_NAMESPACE_DECLARATION = re.compile(rb' xmlns(?::\w+)?="[^"]*"')


def _saving(places: list[Element]) -> int:
    """The bytes sharing saves (a tree's namespace declarations aside: the document's
    root holds them, wherever the tree came from)."""
    size = len(_NAMESPACE_DECLARATION.sub(b"", etree.tostring(places[0], with_tail=False)))
    return (len(places) - 1) * size - DEFINITION_COST - len(places) * REFERENCE_COST


def _shared_definition(places: list[Element]) -> Element:
    """A miscellaneous definition holding the tree, titled by its comment or by the
    definitions it came from (what oscap's report shows for it)."""
    title = next((place.get("comment") for place in places if place.get("comment")), None)
    if title is None:
        holders = list(dict.fromkeys(_title(_definition_of(place)) for place in places))
        title = f"a part of {holders[0]}" + (f" and {len(holders) - 1} other definitions"
                                             if len(holders) > 1 else "")
    body = copy.deepcopy(places[0])
    for attribute in PLACE_ATTRIBUTES:
        if attribute in body.attrib:
            del body.attrib[attribute]
    body.tail = None
    return part_definition(title, body)


def _definition_of(node: Element) -> Element:
    while node.tag != q("definition"):
        parent = node.getparent()
        assert parent is not None
        node = parent
    return node


def _title(definition: Element) -> str:
    title = definition.find(f"{q('metadata')}/{q('title')}")
    return f"'{title.text}'" if title is not None and title.text else "another definition"
