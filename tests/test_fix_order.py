"""What to fix first (issue 38): each rule's measured impact comes from the section its
rule cites, and the fix order (JSON fix_order) is the order of the terminal table, the HTML
page and the figure beside each failing rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lxml import html as lxml_html

from sascheck.cli import main
from sascheck.rules import load_catalogue
from sascheck.scanner.fix_order import FIX_STEPS

from .support.example_roots import EXAMPLES

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
CATALOGUE = load_catalogue()
MEASURED = sorted(rule.id for rule in CATALOGUE.rules.values() if rule.impact)
# A figure: a number followed by %, "times" or a size unit (256 KiB is the paper's 256KB).
FIGURE = re.compile(r"(\d+(?:\.\d+)?)(?=%| times| KiB)")
# Each metric, as the papers word it.
METRIC_WORDS = {"elapsed time": "wall clock", "system CPU time": "system time",
                "AIM7 jobs per minute": "file server", "throughput": "throughput"}


def _clean(text: str) -> str:
    return re.sub(r"<sup>.*?</sup>|[*™]", "", text)


def _section(text: str, title: str) -> str:
    """A seed's section: from the heading line naming it to the next heading."""
    lines = [_clean(line) for line in text.splitlines()]
    start = next(i for i, line in enumerate(lines)
                 if title in line and not re.search(r"\.{4,}", line)  # not the contents
                 and (line.startswith("#") or re.match(r"\d+(\.\d+)* ", line)))
    end, fenced = len(lines), False
    for index in range(start + 1, len(lines)):
        fenced ^= lines[index].startswith("```")  # a shell prompt's # is no heading
        if not fenced and re.match(r"#+ |\d+(\.\d+)* [A-Z]", lines[index]):
            end = index
            break
    return "\n".join(lines[start:end])


@pytest.mark.skipif(not SEEDS.exists(), reason="the seed documents are not beside the project")
@pytest.mark.parametrize("rule_id", MEASURED)
def test_each_figure_is_in_the_section_the_rule_cites(rule_id):
    impact = CATALOGUE.rules[rule_id].impact
    assert impact is not None
    section = _section((SEEDS / impact.reference.source.file).read_text(),
                       impact.reference.section)
    figures = FIGURE.findall(impact.text)
    for figure in figures:
        assert figure in section, (rule_id, figure, section[:300])
    # a text without a figure says so; a ranking percent comes with a figure in the text
    assert figures or "no figure" in impact.text
    assert figures or impact.percent is None
    # Issue 49: a percent is one the section prints, never one derived (60% from "2.5 times")
    if impact.percent is not None:
        assert f"{impact.percent}%" in section.replace(" %", "%"), (rule_id, impact.percent)
    # ... and the metric is the one the paper measured: its word is in the section, or for
    # elapsed time in the paper's account of its workload ("wall clock run times")
    word = METRIC_WORDS.get(impact.metric)
    if word:
        paper = (SEEDS / impact.reference.source.file).read_text()
        assert word in section or (impact.metric == "elapsed time" and word in paper), \
            (rule_id, impact.metric)


def test_fix_order_is_the_order_of_the_terminal_and_the_page(tmp_path, capsys, monkeypatch):
    root = tmp_path / "root"
    EXAMPLES["rhel6-defaults"](root)
    results, page = tmp_path / "r.json", tmp_path / "r.html"
    monkeypatch.setenv("COLUMNS", "200")
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--json",
          str(results), "--html", str(page), "--verbose"])
    table = capsys.readouterr().out
    data = json.loads(results.read_text())
    order = [rule for entry in data["fix_order"] for rule in entry["rules"]]
    failing = sorted(r["id"] for r in data["rules"] if r["result"] == "fail")
    assert sorted(order) == failing  # every failing rule exactly once
    # Issue 49, an expert's window: safety first (barriers off without a protected cache),
    # the tuned profile before THP (RHEL 6's ktune turns THP back on), rebuilds last, steps
    # in order; a rule with its at-boot twin in one entry.
    steps = [entry["step"] for entry in data["fix_order"]]
    assert steps == sorted(steps, key=list(FIX_STEPS).index)
    assert data["fix_order"][0]["rules"][0] == "barrier_requires_protected_cache"
    assert order.index("tuned_profile") < order.index("thp_disabled") < order.index("sas_fs_type")
    assert {entry["step"] for entry in data["fix_order"][-2:]} == {"project"}
    assert all(entry["why"] == FIX_STEPS[entry["step"]] for entry in data["fix_order"])
    # each rule gives the reason it is in its step, not its step's general one (issue 65)
    assert "fix step: override (after the tuned profile, whose [vm] transparent_hugepages" \
        in " ".join(table.split())
    [thp] = [e for e in data["fix_order"] if "thp_disabled" in e["rules"]]
    assert thp["rules"] == ["thp_disabled", "thp_disabled_at_boot"]
    assert thp["impact"]["percent"] == 25
    shown = re.findall(r"^│✘ fail\s+│ (\w+)", table, re.MULTILINE)
    assert shown == order
    articles = [a.get("id").removeprefix("host-") for a in
                lxml_html.fromstring(page.read_text()).xpath("//article[@data-result='fail']")]
    assert articles == order
    thp_article = lxml_html.fromstring(page.read_text()).xpath(
        "//article[@id='host-thp_disabled']")[0].text_content()
    assert "Fix step: override (after the tuned profile, whose [vm] transparent_hugepages" \
        in " ".join(thp_article.split())
    reasons = {rule: " ".join(lxml_html.fromstring(page.read_text()).xpath(
        f"//article[@id='host-{rule}']")[0].text_content().split())
        for rule in ("sas_fs_noatime", "read_ahead", "io_scheduler")}
    assert ("Fix step: safety (mended by the same action as barrier_requires_protected_cache, "
            "whose step it takes (safety: first: a failure here risks data") in \
        reasons["sas_fs_noatime"]
    assert "Fix step: override (after the tuned profile, whose [disk] readahead" in \
        reasons["read_ahead"]
    assert "Fix step: override (mended by the same action as read_ahead" in reasons["io_scheduler"]
    assert not [rule for rule, text in reasons.items() if "THP" in text]
    by_id = {r["id"]: r for r in data["rules"]}
    assert "25% slower" in by_id["thp_disabled"]["impact"]["text"]
    assert "impact" not in by_id["read_ahead"]  # the papers give no figure
    # a missing figure is said once, below the table, not under each rule (issue 65)
    assert "measured: nothing" not in table
    assert table.count("the papers give no figure for it") == 1
    assert f"next: sascheck fix --format bash --root {root}" in " ".join(table.split())


def test_the_next_step_after_a_snapshot_scan_writes_the_fix_from_it_for_its_host(
        tmp_path, capsys, monkeypatch):
    """A snapshot is another host's copy: the terminal's next step writes the fix from the
    archive (never a fix of the machine it was scanned on) and names the host to run it on."""
    root = tmp_path / "root"
    EXAMPLES["rhel6-defaults"](root)
    archive = tmp_path / "sasprod01.tar.gz"
    assert main(["collect", "--root", str(root), "-o", str(archive)]) == 0
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    main(["scan", "--snapshot", str(archive), "--set", "sas_data_dirs=/sasdata"])
    said = " ".join(capsys.readouterr().out.split())
    assert (f"next: sascheck fix --format bash --snapshot {archive} --set "
            "sas_data_dirs=/sasdata -o sascheck-fix.sh, then on sasprod01 as root bash "
            "sascheck-fix.sh --dry-run") in said


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_the_steps_run_in_order_and_no_later_step_undoes_an_earlier_one(
        tmp_path, capsys, monkeypatch, example):
    """Issue 49: the terminal shows the window's steps as headings, each with the command
    fixing that step alone. Run them in that order on a copy of the example root (bash fix
    per step, rescan): what a step mended stays mended after every later step."""
    import subprocess

    root = tmp_path / "root"
    EXAMPLES[example](root)
    sets = ["--set", "sas_data_dirs=/sasdata"]
    monkeypatch.setenv("COLUMNS", "400")
    main(["scan", "--root", str(root), *sets, "--json", str(tmp_path / "before.json")])
    said = capsys.readouterr().out
    order = json.loads((tmp_path / "before.json").read_text())["fix_order"]
    steps = [step for step in FIX_STEPS if any(e["step"] == step for e in order)]
    headings = re.findall(r"^(\d+)\. (\w+): ", said, re.MULTILINE)
    assert [name for _, name in headings] == steps
    # the host page shows the same steps as headings, each with its own command
    main(["report", str(tmp_path / "before.json"), "-o", str(tmp_path / "page.html")])
    page = lxml_html.fromstring((tmp_path / "page.html").read_text())
    assert [h.get("id").removeprefix("host-step-") for h in page.xpath("//h3[@class='fix-step']")] \
        == steps
    commands = [pre.text_content() for pre in page.xpath("//pre[@class='step-command']")]
    assert len(commands) == len([s for s in steps if s != "project"])
    mended: set[str] = set()
    for step in (s for s in steps if s != "project"):
        rules = [rule for entry in order if entry["step"] == step for rule in entry["rules"]]
        assert f"--rule {' --rule '.join(rules)} -o sascheck-fix-{step}.sh" in said
        assert any(f"--rule {' --rule '.join(rules)} --root" in c and f"sascheck-fix-{step}.sh"
                   in c for c in commands), (step, commands)
        fix = tmp_path / f"{step}.sh"
        assert main(["fix", "--format", "bash", "--root", str(root), *sets,
                     *[arg for rule in rules for arg in ("--rule", rule)], "-o", str(fix)]) == 0
        ran = subprocess.run(["bash", str(fix)], env={"SASCHECK_ROOT": str(root),
                                                       "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert ran.returncode in (0, 3), ran.stdout + ran.stderr
        main(["scan", "--root", str(root), *sets, "--quiet", "--json", str(tmp_path / "r.json")])
        now = {r["id"]: r["result"] for r in json.loads((tmp_path / "r.json").read_text())["rules"]}
        assert {rule for rule in mended if now[rule] != "pass"} == set(), step
        mended |= {rule for rule in rules if now[rule] == "pass"}
    capsys.readouterr()
    # where a step was run, it mended something
    assert bool(mended) == any(step != "project" for step in steps), (example, steps)


# A RHEL 8 host whose stock balanced profile is active: tuned 2.x loads what the
# tuned_profile fix writes, so that profile's action also mends what it sets.
RHEL8_BALANCED = {"tuned_active": "balanced", "tuned_custom": {}, "governor": "powersave",
                  "thp_enabled": "[always] madvise never", "thp_defrag": "[always] defer madvise never",
                  "dirty_ratio": 20, "defrag_tmpfiles": False, "bls_options": "root=/dev/mapper/rhel-root ro",
                  "grub_cmdline": ""}


def _profile_options(text: str) -> set[str]:
    """A tuned.conf's options as "[section] option" (tuned reads it with ConfigObj: a line
    "key=value" under the latest "[section]")."""
    section, found = "", set()
    for line in text.splitlines():
        if match := re.fullmatch(r"\[([^\]]+)\]\s*", line):
            section = match.group(1)
        elif match := re.match(r"([\w.]+)\s*=", line):
            found.add(f"[{section}] {match.group(1)}")
    return found


def test_the_tuned_profile_is_one_action_with_what_it_sets(tmp_path, capsys, monkeypatch):
    """Issue 49, one action one line: where tuned 2 will load the profile the tuned_profile
    fix writes, every failing rule that profile sets is in its action (the base step), named
    on one line; running that step writes a profile holding each rule's option, and the
    next boot's verdicts of those rules pass."""
    import subprocess

    from .support.hosts import sas_host

    root = sas_host(tmp_path / "root", **RHEL8_BALANCED)
    monkeypatch.setenv("COLUMNS", "400")
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "-v",
          "--json", str(tmp_path / "r.json")])
    said = capsys.readouterr().out
    order = json.loads((tmp_path / "r.json").read_text())["fix_order"]
    joined = {rule.id for rule in CATALOGUE.rules.values() if rule.tuned_sets}
    base = [entry for entry in order if entry["step"] == "base"]
    assert len(base) == 1 and base[0]["rules"][0] == "tuned_profile"
    action = base[0]["rules"]
    sets = set(base[0]["profile_sets"])
    # every failing rule the profile sets is in this action, and in no other
    failing = {r for entry in order for r in entry["rules"]}
    assert sets == failing & joined
    assert {"cpu_governor_performance", "thp_disabled", "thp_disabled_at_boot",
            "thp_defrag_disabled", "vm_dirty_ratio", "dirty_ratio_at_boot"} <= sets
    assert all(not set(entry["rules"]) & sets for entry in order if entry is not base[0])
    assert f"   {' + '.join(action)} (" in said
    assert "one action: sascheck's tuned profile sets" in said
    assert "fix step: base (with tuned_profile: sascheck's tuned profile sets it too" in said
    # run the step: the profile written holds each joined rule's option, and the at-boot
    # rules among them pass on the next scan
    fix = tmp_path / "base.sh"
    assert main(["fix", "--format", "bash", "--root", str(root), "--set", "sas_data_dirs=/sasdata",
                 *[arg for rule in action for arg in ("--rule", rule)], "-o", str(fix)]) == 0
    ran = subprocess.run(["bash", str(fix)], env={"SASCHECK_ROOT": str(root),
                                                   "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ran.returncode in (0, 3), ran.stdout + ran.stderr
    written = _profile_options((root / "etc/tuned/sas-performance/tuned.conf").read_text())
    assert {CATALOGUE.rules[rule].tuned_sets for rule in sets} <= written, written
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
          "--json", str(tmp_path / "after.json")])
    after = {r["id"]: r["result"] for r in json.loads((tmp_path / "after.json").read_text())["rules"]}
    at_boot = {rule for rule in sets | {"tuned_profile"}
               if rule == "tuned_profile" or CATALOGUE.rules[rule].at_boot_of}
    assert {rule: after[rule] for rule in at_boot} == dict.fromkeys(at_boot, "pass")


def test_tuned_02_keeps_thp_after_the_profile(tmp_path):
    """RHEL 6's tuned 0.2 gets a shipped profile, whose ktune turns THP on (tuned's 1.0
    branch, set_transparent_hugepages always): THP stays its own action, after the profile."""
    from .support.boot_samples import tuned02_installed
    from .support.hosts import sas_host

    files, _links = tuned02_installed("throughput-performance")
    files.pop("/etc/tune-profiles/active-profile")
    root = sas_host(tmp_path / "root", kernel="2.6.32-754.35.1.el6.x86_64", rhel6_thp=True,
                    bls_options=None, grub_cmdline=None, tuned_active=None,
                    defrag_tmpfiles=False, thp_enabled="[always] madvise never",
                    governor="powersave", extra_files=files)
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
          "--json", str(tmp_path / "r.json")])
    order = json.loads((tmp_path / "r.json").read_text())["fix_order"]
    where = {rule: (n, entry["step"]) for n, entry in enumerate(order) for rule in entry["rules"]}
    assert where["tuned_profile"][1] == "base"
    assert where["thp_disabled"][1] == "override"
    assert where["thp_disabled"][0] > where["tuned_profile"][0]
    assert not any(entry.get("profile_sets") for entry in order)


def test_the_table_is_one_line_a_rule_unless_verbose(tmp_path, capsys, monkeypatch):
    """Issue 65: at 120 columns the table was ~150 lines for 17 failures. By default a failing
    rule is its value and what was wanted; --verbose adds what was measured, its step and
    its evidence. An error names the file it could not read either way."""
    root = tmp_path / "root"
    EXAMPLES["rhel8-tuned-sas"](root)
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping: one row, one line
    argv = ["scan", "--root", str(root), "--profile", "viya3", "--set", "sas_data_dirs=/sasdata"]
    main(argv)
    brief = capsys.readouterr().out
    main([*argv, "-v"])
    full = capsys.readouterr().out

    def rows(table: str, rule: str) -> list[str]:
        """The rule's row and the lines its cells wrapped onto (first column empty)."""
        lines = table.splitlines()
        start = next(i for i, line in enumerate(lines) if f" {rule} " in line)
        end = start + 1
        while end < len(lines) and re.match(r"^│ +│", lines[end]):
            end += 1
        return lines[start:end]

    assert len(rows(brief, "max_map_count_at_boot")) == 1
    assert "fix step:" not in brief and "measured:" not in brief
    assert "fix step: boot" in full
    assert "/proc/sys/vm/max_map_count: missing" in brief  # the error's file, by default too
    assert len(full.splitlines()) > len(brief.splitlines())
