"""The data stream's fixes at Satellite scale (issue 66): each rule's fix names the library
pieces it uses, stored once as XCCDF <plain-text>; a person's work is fixtext, not a script;
the benchmark says what it is, under which licence, and where a cited paper cannot be read."""

from __future__ import annotations

import statistics
import subprocess

import pytest
import yaml
from lxml import etree

from sascheck.content.xccdf import benchmark_status
from sascheck.remediations.bash_library import CDATA_END, piece_text
from sascheck.rules import load_catalogue

from .support.oscap import DATASTREAM

X = "{http://checklists.nist.gov/xccdf/1.2}"
VALUE_PREFIX = "xccdf_org.sascheck.content_value_"
CATALOGUE = load_catalogue()


class _AnsibleLoader(yaml.SafeLoader):
    """YAML as Ansible reads a task file: `!unsafe` marks a string it never templates."""


_AnsibleLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _tasks(text: str) -> list[dict]:
    return yaml.load(text, Loader=_AnsibleLoader)  # a SafeLoader subclass


@pytest.fixture(scope="module")
def benchmark() -> etree._Element:
    return next(etree.parse(str(DATASTREAM)).iter(f"{X}Benchmark"))


def _fixes(benchmark: etree._Element) -> dict[str, etree._Element]:
    return {fix.get("id"): fix for fix in benchmark.iter(f"{X}fix")}


def _text(fix: etree._Element, values: dict[str, str], pieces: dict[str, str] | None) -> str:
    """A fix's text with its <sub>s filled in: values by the Value's default, pieces by
    their text (None: left out, as a reader that knows only Values does)."""
    parts = [fix.text or ""]
    for sub in fix:
        idref = sub.get("idref")
        if idref.startswith(VALUE_PREFIX):
            parts.append(values[idref])
        elif pieces is not None:
            parts.append(pieces[idref])
        parts.append(sub.tail or "")
    return "".join(parts)


def _values(benchmark: etree._Element) -> dict[str, str]:
    return {value.get("id"): value.findtext(f"{X}value") or ""
            for value in benchmark.iter(f"{X}Value")}


def _pieces(benchmark: etree._Element, as_oscap: bool) -> dict[str, str]:
    """Each <plain-text> as an XML reader reads it, or as oscap 1.3 does: its inner XML
    (src/XCCDF/benchmark.c, XCCDFE_PLAIN_TEXT: xmlTextReaderReadInnerXml), which keeps a
    CDATA section's markers."""
    return {piece.get("id"): (f"<![CDATA[{piece.text}{CDATA_END}" if as_oscap else piece.text)
            for piece in benchmark.iter(f"{X}plain-text")}


def test_each_fix_is_small_and_its_library_is_stored_once(benchmark):
    """Each rule's fix carried the whole library: 82 fixes of median 74 KB, up to 106 KB,
    6.1 MB of an 8.0 MB data stream."""
    fixes = _fixes(benchmark)
    sizes = [len(etree.tostring(fix)) for fix in fixes.values()]
    assert statistics.median(sizes) <= 12_000 and max(sizes) <= 32_000, sorted(sizes)[-5:]
    pieces = {piece.get("id") for piece in benchmark.iter(f"{X}plain-text")}
    named = {sub.get("idref") for fix in fixes.values() for sub in fix
             if not sub.get("idref").startswith(VALUE_PREFIX)}
    assert named == pieces  # each piece is named, and each name is a piece
    assert sum(len(etree.tostring(p)) for p in benchmark.iter(f"{X}plain-text")) < 600_000


def test_every_fix_reads_whole_as_oscap_and_as_xml_read_it(benchmark, tmp_path):
    """bash parses every shell fix, and YAML every Ansible one, with the pieces filled in
    as oscap fills them (CDATA markers and all, each one in a comment) and as text."""
    values = _values(benchmark)
    for as_oscap in (True, False):
        pieces = _pieces(benchmark, as_oscap)
        texts = {name: _text(fix, values, pieces) for name, fix in _fixes(benchmark).items()}
        script = tmp_path / "all.sh"
        script.write_text("\n".join(text for name, text in texts.items() if name.endswith("_sh")))
        parsed = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert parsed.returncode == 0, parsed.stderr
        assert ("<![CDATA[" in script.read_text()) is as_oscap
        for name, text in texts.items():
            if name.endswith("_ansible"):
                tasks = _tasks(text)
                assert "rule_begin" in tasks[0]["ansible.builtin.shell"]["cmd"], name


def test_a_fix_read_without_its_pieces_says_so_and_changes_nothing(benchmark, tmp_path):
    """Satellite stores each fix as its parser reads it (smart_proxy_openscap's
    arf_parser.rb populate_fixes, openscap_parser's subs.rb replace_sub: a <sub> that names
    no set value is left out): the library is missing there, so the block stops first."""
    values = _values(benchmark)
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/fstab").write_text("/dev/sda1 / xfs defaults 0 0\n")
    for name, fix in _fixes(benchmark).items():
        text = _text(fix, values, None)
        assert len(text) <= 16_000, name
        if name.endswith("_sh"):
            run = subprocess.run(["bash", "-c", text], capture_output=True, text=True,
                                 env={"PATH": "/usr/bin:/bin", "SASCHECK_ROOT": str(root)})
            assert run.returncode == 1 and "no library" in run.stderr, (name, run.stderr)
    assert sorted(p.name for p in (root / "etc").iterdir()) == ["fstab"]


def test_a_persons_work_is_fixtext_and_no_script(benchmark):
    """`oscap xccdf generate fix` listed 11 "needs a human" blocks on a host with neither
    multipath nor XtremIO: such a rule now has fixtext, as SSG's manual rules do."""
    manual = {rule.id for rule in CATALOGUE.rules.values() if rule.manual_fix}
    assert {"sas_fs_type", "sas_dirs_separate", "xtremio_paths_per_lun"} <= manual
    for rule in benchmark.iter(f"{X}Rule"):
        name = rule.get("id").rsplit("_rule_", 1)[1]
        kinds = sorted(fix.get("system").rsplit(":", 1)[1] for fix in rule.iter(f"{X}fix"))
        if name in manual:
            assert kinds == [] and rule.findtext(f"{X}fixtext") == \
                CATALOGUE.rules[name].manual_fix, name
        else:
            assert kinds == ["ansible", "sh"] and rule.find(f"{X}fixtext") is None, name


def test_each_ansible_task_is_tagged_as_ssg_tags_them(benchmark):
    values = _values(benchmark)
    fixes = _fixes(benchmark)
    swappiness = _tasks(_text(fixes["vm_swappiness_ansible"], values, None))
    grub = _tasks(_text(fixes["thp_disabled_at_boot_ansible"], values, None))
    assert all(task["tags"] == swappiness[0]["tags"] for task in swappiness)
    assert {"vm_swappiness", "low_severity", "low_disruption", "no_reboot_needed",
            "configure_strategy", "source_rh-sas92-ra"} <= set(swappiness[0]["tags"])
    assert "reboot_required" in grub[0]["tags"] and "no_reboot_needed" not in grub[0]["tags"]


def test_the_benchmark_says_its_status_licence_and_names_no_borrowed_domain(benchmark):
    assert benchmark_status("0.1.0") == "accepted"
    assert benchmark_status("0.2.0.dev3") == benchmark_status("1.0.0rc1") == "draft"
    assert benchmark.findtext(f"{X}status") == "accepted"  # the catalogue's 0.1.0 release
    assert "Apache License, Version 2.0" in benchmark.findtext(f"{X}notice")
    assert b"sascheck.org" not in DATASTREAM.read_bytes()
    assert {ident.get("system") for ident in benchmark.iter(f"{X}ident")} == \
        {"urn:sascheck:rules"}


def test_a_cited_paper_with_no_public_address_says_so(benchmark):
    offline = online = 0
    for reference in benchmark.iter(f"{X}reference"):
        said = reference.text.endswith("(not published online)")
        assert said is (reference.get("href") is None), reference.text
        offline, online = offline + said, online + (not said)
    assert offline and online


def test_a_piece_that_would_end_its_cdata_section_is_refused():
    assert piece_text("a\n\nb", 2) == "\n  a\n\n  b\n  #"
    with pytest.raises(ValueError, match="CDATA"):
        piece_text('[[ "$x" ]]>/dev/null')

