"""Property-based tests: random input never makes a parser raise or hang, and include or
-CONFIG cycles always end."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sascheck.scanner.parsers import boot
from sascheck.scanner.parsers.mounts import parse_mounts, unescape
from sascheck.scanner.parsers.sas_config import parse_sas_config
from sascheck.scanner.parsers.selection import parse_selection
from sascheck.scanner.parsers.simple import (
    cpuinfo_count,
    cpuinfo_flags,
    meminfo_kib,
    shell_assignments,
)
from sascheck.scanner.parsers.tuned_conf import parse_active_profile
from sascheck.scanner.parsers.udev_rules import is_block_rule, parse_udev_rules
from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.storage.sasdirs import discover
from sascheck.scanner.tuned.active import resolve_chain
from sascheck.scanner.tuned.chain import include_names
from sascheck.scanner.tuned.tuned_conf import LoaderRules, TunedConfError, parse_profile
from tests.support.rootbuilder import RootBuilder

FAST = settings(max_examples=300, deadline=2000,
                suppress_health_check=[HealthCheck.too_slow])
# Text that looks like the files in question: their punctuation, much more often than chance.
tokens = st.sampled_from([*"abcdefgh/ \t\n=[]\"'#,-\\0127()$*{}|!:.sx",
                          "\\040", "\0", "é", "include=", "-CONFIG ", "[main]", "ATTR{", "=="])
texty = st.lists(tokens, max_size=150).map("".join) | st.text(max_size=200)


@FAST
@given(texty)
def test_mount_parser_never_raises(text):
    entries, problems = parse_mounts(text)
    for entry in entries:
        assert entry.mountpoint.startswith("/") or entry.mountpoint in ("none", "swap")
        assert all("," not in option for option in entry.options)
    assert isinstance(problems, list)


@FAST
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
               min_size=1, max_size=40).map(lambda s: "/" + s)
       .filter(lambda point: not point.endswith("/")))  # d_path never writes a trailing "/"
def test_mount_points_round_trip_through_kernel_escapes(point):
    line = f"/dev/sdb {RootBuilder.escape(point)} xfs rw,noatime 0 0"
    entries, _ = parse_mounts(line)
    assert entries and entries[0].mountpoint == point
    assert unescape(RootBuilder.escape(point)) == point


@FAST
@given(texty)
def test_selection_parser(text):
    try:
        selection = parse_selection(text)
    except ValueError as exc:  # the kernel never brackets two words: refused, not guessed
        assert str(exc).startswith("two selected values")
        assert sum(w.startswith("[") and w.endswith("]") for w in text.split()) >= 2
        return
    assert selection.selected is None or selection.selected in selection.options


@FAST
@given(texty)
def test_small_parsers_never_raise(text):
    for rules in (LoaderRules(), LoaderRules(configobj=True, include_list=False)):
        with contextlib.suppress(TunedConfError):  # tuned refuses such a file too
            include_names(parse_profile(text, rules).get("main", {}).get("include", ""), rules)
    parse_active_profile(text)
    parse_sas_config(text)
    for rule in parse_udev_rules(text):
        is_block_rule(rule)
        rule.assigned_attr("queue/scheduler")
    boot.grub_defaults_args(text)
    boot.bls_entry_args(text)
    boot.cmdline_args(text)
    boot.legacy_grub_menu(text).find(text)
    boot.grub2_menu(text).find(text)
    boot.expand_grubenv(text.split(), boot.grubenv_vars(text))
    cpuinfo_flags(text)
    cpuinfo_count(text)
    meminfo_kib(text)
    shell_assignments(text)


names = st.sampled_from(["a", "b", "c", "d", "throughput-performance"])


@FAST
@given(st.dictionaries(names, st.lists(names, max_size=3), max_size=5),
       st.lists(names, min_size=1, max_size=3))
def test_tuned_include_graphs_always_end(graph, active):
    with tempfile.TemporaryDirectory() as directory:
        root = RootBuilder(directory)
        for name, included in graph.items():
            root.file(f"/usr/lib/tuned/{name}/tuned.conf",
                      f"[main]\ninclude={','.join(included)}\n[disk]\nreadahead={len(name)}\n")
        chain = resolve_chain(HostRoot(directory), active)
        assert set(chain.names) <= set(graph)
        cyclic = any(name in _reachable(graph, name) for name in graph)
        if cyclic and any(a in graph for a in active) and not chain.problems:
            # a cycle that the active profiles cannot reach needs no report
            assert not any(n in _reachable(graph, n) for n in _reachable_from(graph, active))


def _reachable(graph, start):
    seen, todo = set(), list(graph.get(start, []))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(graph.get(name, []))
    return seen


def _reachable_from(graph, starts):
    found = set(s for s in starts if s in graph)
    for start in starts:
        found |= {n for n in _reachable(graph, start) if n in graph}
    return found


@FAST
@given(st.dictionaries(st.sampled_from(["x.cfg", "y.cfg", "z.cfg", "sasv9_local.cfg"]),
                       st.lists(st.sampled_from(["x.cfg", "y.cfg", "z.cfg", "sasv9.cfg"]),
                                max_size=3), max_size=4))
def test_sas_config_include_cycles_end(graph):
    with tempfile.TemporaryDirectory() as directory:
        base = "/opt/sas/SASHome/SASFoundation/9.4"
        root = RootBuilder(directory)
        root.file(f"{base}/sasv9.cfg", "-CONFIG !SASROOT/x.cfg\n-WORK /w0\n")
        for name, included in graph.items():
            body = "".join(f'-config "!SASROOT/{inc}"\n' for inc in included)
            root.file(f"{base}/{name}", body + f"-WORK /w{len(body)}\n")
        found = discover(HostRoot(directory), {"sas_data_dirs": ["/d"]}, {})
        assert any(d.role == "WORK" for d in found.dirs)
        assert len(found.files_read) <= 64
        assert Path(directory).exists()
