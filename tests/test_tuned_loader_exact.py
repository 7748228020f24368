"""tuned's loader as the installed release runs it (issue 23, "tuned's loader, exactly"):
sascheck's chain against tuned's own Loader (Debian's tuned package, tests/support/tuned_loader.py)
on the same profile files, and the version-dependent rules cited from tuned's source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.tuned.chain import HostMatch, resolve_chain
from sascheck.scanner.tuned.tuned_conf import LoaderRules

from .support import tuned_loader
from .support.boot_samples import tuned_version_file
from .support.example_roots import SAS_TUNED_PROFILE
from .support.rootbuilder import RootBuilder

TUNED_VERSION = tuned_loader.PACKAGE / "tuned" / "version.py"


def _debian_tuned_version() -> tuple[int, int, int]:
    text = TUNED_VERSION.read_text()
    parts = dict(re.findall(r"TUNED_VERSION_(MAJOR|MINOR|PATCH) = (\d+)", text))
    return int(parts["MAJOR"]), int(parts["MINOR"]), int(parts["PATCH"])


def _image(tmp_path: Path, shipped: dict[str, str], site: dict[str, str]) -> Path:
    root = RootBuilder(tmp_path)
    for name, text in shipped.items():
        root.file(f"/usr/lib/tuned/{name}/tuned.conf", text)
    for name, text in site.items():
        root.file(f"/etc/tuned/{name}/tuned.conf", text)
    return tmp_path


BASE = "[main]\nsummary=base\n[cpu]\ngovernor=performance\n[disk]\nreadahead=>4096\n"

# Each case: (shipped profiles, site profiles, the active profile).
CASES = {
    # ConfigParser's inline_comment_prefixes=('#'): a '#' after whitespace ends the value
    "inline comment": ({"base": BASE}, {"site": "[main]\ninclude=base\n[vm]\n"
                                                "transparent_hugepages=never # SAS wants it off\n"
                                                "dirty=40#not a comment here\n"}, "site"),
    # ';' lines are comments; an indented line continues the value before it
    "comments and continuations": ({"base": BASE}, {"site": "; site profile\n[main]\n"
                                                            "include=base\n[sysctl]\n"
                                                            "kernel.x=1\n  2\n"}, "site"),
    # a site profile including its own name loads the package's namesake (locator skips
    # the file already loaded)
    "self include": ({"base": BASE}, {"base": "[main]\ninclude=base\n[vm]\n"
                                              "transparent_hugepages=never\n"}, "base"),
    # include= is split on ',' or ';' (loader._load_profile), '-name' is conditional
    "include list": ({"base": BASE, "extra": "[vm]\ntransparent_hugepages=never\n"},
                     {"site": "[main]\ninclude=base; extra,-not-installed\n"}, "site"),
    # strict=False: a repeated section merges, the later option wins
    "repeated section": ({"base": BASE}, {"site": "[main]\ninclude=base\n[cpu]\n"
                                                  "governor=powersave\n[cpu]\n"
                                                  "governor=performance\n"}, "site"),
    # a cycle: the file already loaded is skipped, not followed again
    "cycle": ({"a": "[main]\ninclude=b\n[cpu]\ngovernor=a\n",
               "b": "[main]\ninclude=a\n[disk]\nreadahead=8\n"}, {}, "a"),
    # an include tuned cannot find fails the whole load
    "missing include": ({"base": BASE}, {"site": "[main]\ninclude=base,not-installed\n"},
                        "site"),
    # a key before any section, a line without '=': the parser refuses the file
    "no section": ({"base": BASE}, {"site": "include=base\n[cpu]\ngovernor=performance\n"},
                   "site"),
    "no delimiter": ({"base": BASE}, {"site": "[main]\ninclude=base\n[cpu]\nperformance\n"},
                     "site"),
    # Issue 50: enabled= and replace= are true only for the texts unit.py lists; yes, on and
    # TRUE are false (an Ansible template writing yes turns the unit off)
    "enabled yes": ({"base": BASE}, {"site": "[main]\ninclude=base\n[vm]\nenabled=yes\n"
                                             "transparent_hugepages=never\n[disk]\n"
                                             "enabled=True\n[cpu]\nenabled=1\n"}, "site"),
    "enabled on and TRUE": ({"base": BASE}, {"site": "[main]\ninclude=base\n[disk]\n"
                                                     "enabled=on\n[cpu]\nenabled=TRUE\n"},
                            "site"),
    "replace yes merges": ({"base": BASE}, {"site": "[main]\ninclude=base\n[disk]\n"
                                                    "replace=yes\nelevator=deadline\n"}, "site"),
    "replace True starts afresh": ({"base": BASE}, {"site": "[main]\ninclude=base\n[disk]\n"
                                                            "replace=True\nelevator=deadline\n"},
                                   "site"),
    # merger.py: the newer unit's enabled (true unless it says) replaces the older's, and
    # its type is its own name unless it says
    "a child re-enables a unit": ({"base": BASE + "[x]\ntype=sysctl\nenabled=false\n"
                                           "vm.dirty_ratio=40\n"},
                                  {"site": "[main]\ninclude=base\n[x]\nvm.swappiness=10\n"},
                                  "site"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_chain_is_what_tuneds_own_loader_loads(tmp_path, case):
    tuned_loader.require()
    shipped, site, active = CASES[case]
    image = _image(tmp_path, shipped, site)
    expected = tuned_loader.load(image, active)
    rules = LoaderRules.for_host(HostRoot(image), _debian_tuned_version())
    chain = resolve_chain(HostRoot(image), [active], HostMatch("", ""), rules)
    if "error" in expected:
        assert chain.failed, (case, expected)
        assert chain.units == {}
        return
    assert not chain.failed, chain.failed
    ours = {name: {key: value for key, (value, _) in unit.options.items()}
            for name, unit in chain.units.items()}
    theirs = {name: options for name, options in expected["units"].items() if options}
    assert {name: options for name, options in ours.items() if options} == theirs
    assert {name: not unit.disabled for name, unit in chain.units.items()} == \
        expected["enabled"]
    assert {name: unit.type for name, unit in chain.units.items()} == expected["types"]


@pytest.mark.parametrize(("version", "enabled"), [
    ((2, 10, 0), {"true": True, "1": False, "True": False}),
    ((2, 11, 0), {"true": True, "1": True, "True": False}),
    ((2, 13, 0), {"true": True, "1": True, "True": True})])
def test_unit_booleans_as_each_release_reads_them(tmp_path, version, enabled):
    """tuned/profiles/unit.py compares the text with a list: [True, "true", 1] to v2.10
    (a profile's text is never the int 1), "1" added by commit 2b543b0 (v2.11.0, what RHEL
    7.9 ships), "True" by d6f0a09 (v2.13.0). RHEL 7.9 with [vm] enabled=True keeps THP on."""
    profile = "".join(f"[u{index}]\ntype=vm\nenabled={text}\ntransparent_hugepages=never\n"
                      for index, text in enumerate(enabled))
    image = _image(tmp_path, {"p": profile}, {})
    chain = resolve_chain(HostRoot(image), ["p"], HostMatch("", ""),
                          LoaderRules.for_host(HostRoot(image), version))
    assert {text: chain.applies(chain.units[f"u{index}"]) is None
            for index, text in enumerate(enabled)} == enabled


def test_a_failed_load_fails_tuned_profile_with_tuneds_reason(host, scan):
    root = host(tuned_active="sas-site", tuned_custom={
        "sas-site": "[main]\ninclude=throughput-performance,sas-missing\n"})
    rule = scan(root)["by_id"]["tuned_profile"]
    assert rule["result"] == "fail"
    active = next(e for e in rule["evidence"] if e["subject"] == "active profile")
    assert "tuned cannot find profile 'sas-missing'" in active["note"]
    assert "it applies no profile" in active["note"]


@pytest.mark.parametrize(("version", "value"), [
    ((2, 11, 0), "never"), ((2, 18, 0), "never #off"), ((2, 20, 0), "never")])
def test_comments_as_each_releases_parser_reads_them(tmp_path, version, value):
    # loader._load_config_data: until v2.16 ConfigObj(list_values=False), whose value regex
    # (_nolistvalue) ends unquoted text at any '#'; v2.17-v2.18 ConfigParser() without inline
    # comments; from v2.19 inline_comment_prefixes=('#'), a '#' after whitespace.
    image = _image(tmp_path, {"p": "[vm]\ntransparent_hugepages=never #off\n"}, {})
    chain = resolve_chain(HostRoot(image), ["p"], HostMatch("", ""),
                          LoaderRules.for_host(HostRoot(image), version))
    assert chain.setting("vm", "transparent_hugepages") == (value, "p")


@pytest.mark.parametrize(("version", "refused"), [((2, 18, 0), True), ((2, 20, 0), False)])
def test_a_repeated_section_is_refused_until_2_20(tmp_path, version, refused):
    # ConfigParser's strict default until loader.py passed strict=False (v2.20.0)
    image = _image(tmp_path, {"p": "[cpu]\ngovernor=powersave\n[cpu]\ngovernor=performance\n"},
                   {})
    chain = resolve_chain(HostRoot(image), ["p"], None,
                          LoaderRules.for_host(HostRoot(image), version))
    assert bool(chain.failed) == refused
    assert chain.setting("cpu", "governor") == (None if refused else ("performance", "p"))


def test_before_2_13_include_names_one_profile(tmp_path):
    # loader._load_profile at v2.12.0: include_name = expand(include), loaded as one name;
    # v2.13.0 splits it with re.split(r"\b\s*[,;]\s*", ...)
    image = _image(tmp_path, {"base": BASE, "extra": BASE},
                   {"site": "[main]\ninclude=base,extra\n"})
    old = resolve_chain(HostRoot(image), ["site"], None,
                        LoaderRules.for_host(HostRoot(image), (2, 12, 0)))
    assert "tuned cannot find profile 'base,extra'" in old.failed
    new = resolve_chain(HostRoot(image), ["site"], None,
                        LoaderRules.for_host(HostRoot(image), (2, 13, 0)))
    assert new.names == ["base", "extra", "site"]


@pytest.mark.parametrize(("virtual", "loaded"), [(False, "throughput-performance"),
                                                  (True, "virtual-guest")])
def test_virt_check_in_include_follows_the_host(tmp_path, virtual, loaded):
    # functions/function_virt_check.py: virt-what printing something is a VM: first argument
    image = _image(tmp_path, {"throughput-performance": BASE, "virtual-guest": BASE}, {
        "sas": "[main]\ninclude=${f:virt_check:virtual-guest:throughput-performance}\n"})
    chain = resolve_chain(HostRoot(image), ["sas"], HostMatch("", "", virtual),
                          LoaderRules.for_host(HostRoot(image), (2, 20, 0)))
    assert chain.names == [loaded, "sas"]


def test_an_unevaluated_function_in_include_is_not_a_verdict(tmp_path):
    image = _image(tmp_path, {"base": BASE}, {"sas": "[main]\ninclude=${f:exec:/bin/x}\n"})
    chain = resolve_chain(HostRoot(image), ["sas"], HostMatch("", "", False),
                          LoaderRules.for_host(HostRoot(image), (2, 20, 0)))
    assert chain.unreadable and "cannot evaluate" in chain.problems[0]


def test_new_layout_loads_only_its_directories(tmp_path):
    # consts.py from v2.23.0: CFG_DEF_PROFILE_DIRS = [/usr/lib/tuned/profiles,
    # /etc/tuned/profiles]; a profile left in /etc/tuned/NAME is no longer found.
    root = RootBuilder(tmp_path)
    root.file("/usr/lib/tuned/profiles/base/tuned.conf", BASE)
    root.file("/etc/tuned/site/tuned.conf", "[main]\ninclude=base\n")
    chain = resolve_chain(HostRoot(tmp_path), ["site"], None,
                          LoaderRules.for_host(HostRoot(tmp_path), (2, 24, 0)))
    assert "tuned cannot find profile 'site'" in chain.failed
    root.file("/etc/tuned/tuned-main.conf", "profile_dirs = /usr/lib/tuned/profiles,/etc/tuned\n")
    chain = resolve_chain(HostRoot(tmp_path), ["site"], None,
                          LoaderRules.for_host(HostRoot(tmp_path), (2, 24, 0)))
    assert chain.names == ["base", "site"] and not chain.failed


# tuned/ppd/ppd.conf as tuned ships it (v2.22.0 on)
PPD_CONF = """\
[main]
# The default PPD profile
default=balanced
battery_detection=true
sysfs_acpi_monitor=true

[profiles]
# PPD = TuneD
power-saver=powersave
balanced=balanced
performance=throughput-performance

[battery]
# PPD = TuneD
balanced=balanced-battery
"""


def _ppd(base: str | None, target: str) -> dict:
    files = {"/usr/sbin/tuned-ppd": "#!/usr/bin/python3\n", "/etc/tuned/ppd.conf": PPD_CONF,
             "/usr/lib/systemd/system/tuned-ppd.service": "[Install]\nWantedBy=graphical.target\n"}
    if base is not None:
        files["/etc/tuned/ppd_base_profile"] = base + "\n"
    links = {"/etc/systemd/system/graphical.target.wants/tuned-ppd.service":
             "/usr/lib/systemd/system/tuned-ppd.service",
             "/etc/systemd/system/default.target": f"/usr/lib/systemd/system/{target}"}
    return {"extra_files": files, "extra_links": links}


@pytest.mark.parametrize(("base", "target", "result", "active"), [
    # controller.initialize: switch_profile(base) at every start, over tuned-adm's choice
    ("balanced", "graphical.target", "fail", "balanced"),
    ("performance", "graphical.target", "pass", "throughput-performance"),
    # the unit is WantedBy=graphical.target: a server booting multi-user never starts it
    ("balanced", "multi-user.target", "pass", "sas-performance"),
    # no saved base: tuned's recommendation, which sascheck does not evaluate
    (None, "graphical.target", "error", "unreadable"),
])
def test_tuned_ppd_sets_the_profile_at_every_start(host, scan, base, target, result, active):
    rule = scan(host(**_ppd(base, target)))["by_id"]["tuned_profile"]
    assert rule["result"] == result, rule["actual"]
    item = next(e for e in rule["evidence"] if e["subject"] == "active profile")
    assert item["actual"] == active
    if target == "graphical.target" and base:
        assert "tuned-ppd starts at boot" in item["note"]
        assert "sas-performance in /etc/tuned/active_profile" in item["note"]


@pytest.mark.parametrize(("version", "defrag"), [((2, 10, 0), "not set: the kernel's default"),
                                                 ((2, 11, 0), "never")])
def test_thp_defrag_from_tuned_counts_from_2_11(host, scan, version, defrag):
    # plugin_vm.py: the transparent_hugepage.defrag command arrives in v2.11.0
    root = host(defrag_tmpfiles=False, extra_files=tuned_version_file(version))
    rule = scan(root)["by_id"]["thp_disabled_at_boot"]
    item = next(e for e in rule["evidence"] if e["subject"].startswith("THP defrag"))
    assert item["actual"] == defrag, item
    if version < (2, 11, 0):
        assert "tuned 2.10.0 ignores transparent_hugepage.defrag (honoured from 2.11" in (
            item["note"])


def _nvme_sas_host(path: Path, version: tuple[int, int, int]) -> Path:
    """SAS DATA straight on an NVMe namespace (no LVM), tuned's SAS profile active."""
    root = RootBuilder(path)
    root.identity("sasnvme01", "4.18.0-193.el8.x86_64", "Red Hat Enterprise Linux 8.2 (Ootpa)")
    root.disk("nvme1n1", scheduler="[none] mq-deadline kyber bfq", read_ahead_kb=128)
    root.mount("/dev/nvme1n1", "/sasdata", "xfs", "rw,noatime,attr2,inode64,noquota")
    root.write_mounts()
    root.thp(enabled="always madvise [never]")
    root.tuned("sas-performance", custom={"sas-performance": SAS_TUNED_PROFILE})
    for name, text in tuned_version_file(version).items():
        root.file(name, text)
    return path


@pytest.mark.parametrize(("version", "result"), [((2, 17, 0), "fail"), ((2, 18, 0), "pass")])
def test_tuned_disk_settings_reach_nvme_from_2_18(tmp_path, scan, version, result):
    # plugin_disk._device_is_supported: a parent subsystem of scsi, virtio or xen, and nvme
    # from v2.18.0
    rule = scan(_nvme_sas_host(tmp_path / "root", version))["by_id"]["io_tuning_at_boot"]
    assert rule["result"] == result, rule["actual"]
    skipped = [e for e in rule["evidence"] if e["result"] == "informational"]
    if version < (2, 18, 0):
        assert {e["actual"] for e in skipped} == {"readahead=>4096", "elevator=mq-deadline"}
        assert "tuned 2.17.0's disk plugin tunes NVMe disks from 2.18" in skipped[0]["note"]
    else:
        assert not skipped
