"""The bash library cut to what a script uses (#45): bash itself says what the library
defines, and a script with the cut library still has every function it calls."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from sascheck.remediations.bash_library import layout_for, library_for, library_parts, parse
from sascheck.remediations.generate import FixInput, bash_script
from sascheck.remediations.rendering import bash_library
from sascheck.rules.host_layout.shell import shell_layout
from sascheck.rules.loader import load_catalogue
from sascheck.scanner.sources.hostroot import HostRoot


def _defined_by_bash(text: str) -> set[str]:
    """The functions bash defines from `text` (its top-level statements not run: only the
    definitions are given to bash, each checked by `bash -n` first)."""
    script = text + "\ndeclare -F | awk '{print $3}'\n"
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def test_the_parse_is_the_library_again_and_finds_what_bash_defines() -> None:
    text = bash_library()
    chunks = parse(text)
    assert "".join(chunk.text for chunk in chunks) == text
    functions = [chunk for chunk in chunks if chunk.name]
    for chunk in functions:  # each function chunk is one whole definition
        assert subprocess.run(["bash", "-n"], input=chunk.text, text=True).returncode == 0, \
            chunk.name
    assert _defined_by_bash("".join(chunk.text for chunk in functions)) == \
        {chunk.name for chunk in functions}
    # nothing is left defined in the statements: they hold no function bash would see
    statements = "".join(chunk.text for chunk in chunks if chunk.name is None)
    assert "() {" not in statements


def test_an_unclosed_function_is_named() -> None:
    with pytest.raises(ValueError, match="broken"):
        parse("broken() {\n    echo\n")


def test_a_function_is_kept_when_reached_through_another() -> None:
    library = parse("# top\nA=1\nleaf() { :; }\n# calls leaf\nmiddle() {\n    leaf\n}\n"
                    "unused() { :; }\n")
    assert [chunk.name for chunk in library] == [None, "leaf", "middle", "unused"]
    assert library[2].text.startswith("# calls leaf\n")  # the comment goes with its function


@pytest.mark.parametrize("mode", ["bash", "xccdf"])
def test_no_rules_script_names_a_function_it_does_not_define(mode: str) -> None:
    """A function dropped from a script is named nowhere in it (not called, not passed to
    another function, not in a trap); bash says which functions the script defines."""
    catalogue = load_catalogue()
    defaults = {name: variable.default for name, variable in catalogue.variables.items()}
    library = _defined_by_bash("".join(chunk.text for chunk in parse(bash_library())
                                       if chunk.name))
    for rule_id in catalogue.rules:
        fix = FixInput(host="h", role="detected", profile="(XCCDF)", kernel="",
                       values=defaults, rule_ids=(rule_id,))
        script = bash_script(catalogue, fix, mode)
        defined = _defined_by_bash("".join(chunk.text for chunk in parse(script)
                                           if chunk.name))
        assert defined < library, rule_id  # something was cut
        dropped = "|".join(sorted(library - defined))
        named = re.findall(rf"(?<![\w-])(?:{dropped})(?![\w-])", script)
        assert not named, (rule_id, named)


def test_a_whole_script_keeps_the_librarys_order_and_statements() -> None:
    kept = library_for("say hello")
    assert "say()" in kept and "\nwhile (( $# > 0 )); do" in kept  # statements stay in place
    functions, statements = library_parts("say hello")
    assert "while (( $# > 0 )); do" in statements and "() {" not in statements
    assert functions.index("say()") >= 0


def test_the_layout_keeps_the_variables_a_script_names_and_every_line_of_them() -> None:
    layout = shell_layout()
    kept = layout_for(layout, 'ls "$LAYOUT_TUNED02_LINKS" "$LAYOUT_GRUBENV"')
    names = {line.split("=", 1)[0] for line in kept.splitlines()}
    assert names == {"LAYOUT_TUNED02_LINKS", "LAYOUT_GRUBENV"}
    run = subprocess.run(["bash", "-c", f"{kept}\n{layout.replace(kept, '')}\n"
                          'printf %s "$LAYOUT_TUNED02_LINKS"'], capture_output=True,
                         text=True, check=True)
    assert run.stdout.count(":") == 4  # the long value, continued over four lines, is whole


def test_a_directory_is_placed_through_links_as_the_scanner_places_it(tmp_path: Path) -> None:
    """The library's in_root_path against the scanner's HostRoot.resolve on links of every
    kind: absolute (taken inside the root), relative, "..", chained, and a missing part."""
    root = tmp_path / "root"
    (root / "pv-disks/store/saswork").mkdir(parents=True)
    (root / "nvme").mkdir()
    (root / "nvme/disk").symlink_to("/pv-disks/store")  # absolute: inside the root
    (root / "opt").mkdir()
    (root / "opt/work").symlink_to("../nvme/disk/saswork")  # relative, through another
    (root / "etc").mkdir()
    (root / "etc/up").symlink_to("../../../../..")  # ".." never above the root
    paths = ["/nvme/disk/saswork", "/opt/work", "/opt/work/../cache", "/etc/up/pv-disks",
             "/missing/x", "/", "/nvme/./disk/"]
    functions = "".join(chunk.text for chunk in parse(bash_library())
                        if chunk.name == "in_root_path")
    script = functions + 'ROOT="$1"; shift\nfor p in "$@"; do in_root_path "$p"; echo; done\n'
    run = subprocess.run(["bash", "-c", script, "bash", str(root), *paths],
                         capture_output=True, text=True, check=True)
    host = HostRoot(root)
    assert run.stdout.splitlines() == [host.resolve(path) for path in paths]


def test_a_layout_variable_another_names_is_kept() -> None:
    layout = "LAYOUT_A=/a\nLAYOUT_B=\"$LAYOUT_A\"/b\nLAYOUT_C=/c"
    assert layout_for(layout, 'ls "$LAYOUT_B"') == "LAYOUT_A=/a\nLAYOUT_B=\"$LAYOUT_A\"/b"
