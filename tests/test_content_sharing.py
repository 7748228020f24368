"""What the data stream stores once so that each ARF carries it once (issue 66): criteria
trees several definitions hold (content/oval_share.py), and the library pieces the bash and
Ansible fixes share (remediations/xccdf_fixes.py). The verdicts these leave unchanged are
held by tests/test_parity.py, which runs oscap on the committed data stream."""

from __future__ import annotations

import subprocess

from lxml import etree

from sascheck.content.oval import OvalDocument, all_of, any_of, criterion, none_of, q
from sascheck.content.oval_share import _repeated_trees, _saving
from sascheck.remediations.xccdf_fixes import ANSIBLE_PLANNER_INDENT, indentation_inert

from .support.oscap import DATASTREAM

OVAL = "{http://oval.mitre.org/XMLSchema/oval-definitions-5}"


def _wide_tree(first_test: int) -> etree._Element:
    """A tree big enough to be worth a definition of its own."""
    return any_of(*(all_of(criterion(f"oval:t:tst:{first_test + n}"),
                           criterion(f"oval:t:tst:{first_test + n + 1}"))
                    for n in range(0, 12, 2)), comment="a shared condition")


def test_a_tree_two_definitions_hold_is_stored_once_with_each_place_kept():
    document = OvalDocument(namespace="t")
    plain = document.definition("first", "d", all_of(_wide_tree(1), criterion("oval:t:tst:90")))
    negated = document.definition("second", "d", any_of(
        none_of(*_wide_tree(1)), criterion("oval:t:tst:91")))
    assert document.share_repeated_criteria() == 1
    root = document.root("2026-01-01T00:00:00")
    definitions = {d.get("id"): d for d in root.iter(f"{OVAL}definition")}
    [shared] = [d for d in definitions.values() if d.get("class") == "miscellaneous"]
    assert shared.findtext(f"{OVAL}metadata/{OVAL}title") == "a shared condition"
    assert len(list(shared.find(f"{OVAL}criteria").iter(f"{OVAL}criterion"))) == 12
    places = {definition_id: definitions[definition_id].find(f".//{OVAL}extend_definition")
              for definition_id in (plain, negated)}
    assert all(p.get("definition_ref") == shared.get("id") for p in places.values())
    assert places[plain].get("negate") is None
    assert places[negated].get("negate") == "true"  # the place's negation stays with it
    # each place holds the reference alone: the tree is nowhere else
    assert sum(1 for _ in root.iter(f"{OVAL}criterion")) == 12 + 2


def test_a_small_or_single_tree_stays_where_it_is():
    document = OvalDocument(namespace="t")
    small = all_of(criterion("oval:t:tst:1"), criterion("oval:t:tst:2"))
    document.definition("first", "d", any_of(small, criterion("oval:t:tst:3")))
    document.definition("second", "d", any_of(small, criterion("oval:t:tst:4")))
    document.definition("third", "d", any_of(_wide_tree(10), criterion("oval:t:tst:5")))
    assert document.share_repeated_criteria() == 0


def test_the_committed_data_stream_holds_no_tree_worth_sharing():
    """The build shares them: with content/build.py's call removed this fails."""
    tree = etree.parse(str(DATASTREAM))
    for oval in tree.iter(f"{OVAL}oval_definitions"):
        definitions = list(oval.iter(q("definition")))
        worth = [places for places in _repeated_trees(definitions).values()
                 if _saving(places) > 0]
        assert not worth, [etree.tostring(p[0])[:200] for p in worth]


def test_only_pieces_bash_parses_the_same_indented_have_one_form():
    """bash decides (declare -f): a here-document's body and a string spanning lines keep
    their indentation, so such a piece keeps a form for each script."""
    pieces = {
        "plain": 'f() {\n    local x=1\n    [[ $x == 1 ]] && echo "one"\n}',
        "heredoc": "g() {\n    cat <<'EOF'\nline\nEOF\n}",
        "string": "h() {\n    awk '\n{ print }\n' file\n}",
        "statements": "A=1\nif [[ $A ]]; then\n    B=2\nfi",
    }
    assert indentation_inert(pieces) == {"plain", "statements"}
    # the heredoc piece indented would not even end: bash reads it to the end of input
    indented = "\n".join(" " * ANSIBLE_PLANNER_INDENT + line for line in
                         pieces["heredoc"].split("\n"))
    run = subprocess.run(["bash", "-c", f"{indented}\ng"], capture_output=True, text=True)
    assert run.stdout != "line\n"
