"""The data stream's fixes: each rule's bash block and Ansible tasks, with site values and
the library's shared pieces left as marks that content/xccdf.py turns into XCCDF <sub>s
(oscap fills them in when it assembles or runs a fix)."""

from __future__ import annotations

import re

from ..rules import Catalogue, Rule
from ..rules.host_layout import shell_layout
from .bash_library import (
    SHARED,
    TUNED_PROFILES_PIECE,
    piece_text,
    reached_functions,
    shared_pieces,
)
from .generate import bash_script, task_tags, tuned_profile_assignments
from .rendering import FixInput, environment
from .site_values import SAS_DATA_DIRS_ENV, SAS_DIRS_ENV, SUB, fix_values

# The shared pieces' forms: a bash fix holds them as they are; an Ansible fix holds its
# planner in a YAML block scalar, every line of which is indented (rule_tasks.yml.j2).
ANSIBLE_PLANNER_INDENT = 6
_MARKED = re.compile("\x01([A-Za-z0-9_]+)\x01")


def _in_form(text: str, form: str) -> str:
    """`text` with each shared piece's mark naming the piece in `form` (sh or ansible)."""
    return _MARKED.sub(lambda match: f"\x01{form}_{match.group(1)}\x01", text)


def _xccdf_fix_input(catalogue: Catalogue, rule_ids: tuple[str, ...] = ()) -> FixInput:
    """A data stream fix's input: any host, the role detected, values from XCCDF <sub>s."""
    defaults = {name: variable.default for name, variable in catalogue.variables.items()}
    return FixInput(host="the host being remediated", role="detected", profile="(XCCDF)",
                    kernel="", values=defaults, rule_ids=rule_ids)


def _fixed_rules(catalogue: Catalogue) -> list[Rule]:
    """The rules the data stream gives a <fix>: those whose remedy is not a person's work."""
    return [rule for rule in catalogue.rules.values() if not rule.manual_fix]


def _common_functions(catalogue: Catalogue) -> frozenset[str]:
    """The library functions every data stream fix calls, in either script form."""
    reached = [reached_functions(bash_script(catalogue, _xccdf_fix_input(catalogue, (rule.id,)),
                                             mode))
               for rule in _fixed_rules(catalogue) for mode in ("xccdf", "env")]
    return frozenset.intersection(*reached)


XccdfFixes = dict[str, list[tuple[str, str]]]  # rule id -> [(fix system, text)]


def xccdf_fix_texts(catalogue: Catalogue) -> tuple[XccdfFixes, dict[str, str]]:
    """Each rule's fixes for the data stream, and the shared pieces they name (in both
    forms), from one reckoning of the functions every fix calls."""
    common = _common_functions(catalogue)
    fixes, runs = _rule_fixes(catalogue, common)
    return fixes, {**_shared_texts(catalogue, common), **runs}


# A run of lines every fix of one form holds (the set-up's comments and statements) is
# stored once too, when it outweighs its <plain-text> and <sub>: the set-up was some 330 KB
# of the data stream's fix text, repeated in every fix and so in every ARF (#66).
SHARED_RUN_MIN_CHARACTERS = 200


def _lines_in_every(texts: list[str]) -> list[str]:
    """The longest runs of whole lines of the first text that every text holds, in order,
    none holding a mark (a site value or a piece stays in each fix, as oscap fills it in)."""
    runs: list[str] = []
    lines = texts[0].split("\n")
    padded = [f"\n{text}\n" for text in texts]  # a run matches at line boundaries only

    def in_every(start: int, end: int) -> bool:
        run = "\n".join(lines[start:end])
        return all(f"\n{run}\n" in text for text in padded)

    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and not _has_mark(lines[end]) and in_every(start, end + 1):
            end += 1
        run = "\n".join(lines[start:end])
        if len(run) >= SHARED_RUN_MIN_CHARACTERS:
            runs.append(run)
        start = max(end, start + 1)
    return runs


# The guard that stops a fix read without its pieces (Satellite's reader) stays in each fix.
NO_LIBRARY_GUARD = "sascheck: no library"
# What a site value's mark (SUB) and a shared piece's mark (SHARED) hold a name between.
_MARK_DELIMITERS = (SUB[0], SHARED[-1])


def _has_mark(line: str) -> bool:
    return any(mark in line for mark in _MARK_DELIMITERS) or NO_LIBRARY_GUARD in line


def _share_runs(texts: list[str], name: str) -> tuple[list[str], dict[str, str]]:
    """``texts`` with each run every one holds replaced by a mark naming its piece
    (``name``_N), and the pieces' texts."""
    pieces = {}
    for number, run in enumerate(_lines_in_every(texts), start=1):
        piece = f"{name}_{number}"
        pieces[piece] = run
        texts = [f"\n{text}\n".replace(f"\n{run}\n", f"\n{SHARED.format(piece)}\n", 1)[1:-1]
                 for text in texts]
    return texts, pieces


def _shared_texts(catalogue: Catalogue, common: frozenset[str]) -> dict[str, str]:
    """The shared pieces in each form, by the name a fix's mark gives them: in an Ansible
    fix a piece's lines are indented as the planner's lines are."""
    pieces = shared_pieces(shell_layout(), common)
    pieces[TUNED_PROFILES_PIECE] = tuned_profile_assignments(_xccdf_fix_input(catalogue), environment())
    texts = {}
    for name, text in pieces.items():
        texts[f"sh_{name}"] = piece_text(text)
        texts[f"ansible_{name}"] = piece_text(text, ANSIBLE_PLANNER_INDENT)
    return texts


def _rule_fixes(catalogue: Catalogue, common: frozenset[str]
                ) -> tuple[XccdfFixes, dict[str, str]]:
    """Each rule's bash and Ansible fix: values come from XCCDF <sub> elements (marked with
    SUB), so `oscap xccdf generate fix` fills them in, and so does the library (marked with
    SHARED: _shared_texts), and the runs of set-up lines every fix of a form holds (returned
    by name, in their form). A rule whose remedy is work for a person has none: its XCCDF
    fixtext says what to do."""
    env = environment()
    fixes: XccdfFixes = {rule_id: [] for rule_id in catalogue.rules}
    rules = _fixed_rules(catalogue)
    inputs = [_xccdf_fix_input(catalogue, (rule.id,)) for rule in rules]
    blocks, block_runs = _share_runs(
        [bash_script(catalogue, fix, "xccdf", common) for fix in inputs], "setup")
    planners, planner_runs = _share_runs(
        [bash_script(catalogue, fix, "env", common).rstrip("\n") for fix in inputs], "planner")
    for rule, block, planner in zip(rules, blocks, planners):
        tasks = env.get_template("ansible/rule_tasks.yml.j2").render(
            rule=rule, planner=planner, planner_indent=ANSIBLE_PLANNER_INDENT,
            sas_dirs_env=SAS_DIRS_ENV, sas_data_dirs_env=SAS_DATA_DIRS_ENV, sub=SUB,
            revertable=False, tags=task_tags(rule),
            site_values=fix_values(catalogue, (rule.id,)))
        fixes[rule.id] = [
            ("urn:xccdf:fix:script:sh", _in_form(block, "sh")),
            ("urn:xccdf:fix:script:ansible", _in_form(tasks.rstrip("\n") + "\n", "ansible"))]
    runs = {f"sh_{name}": piece_text(text) for name, text in block_runs.items()}
    runs.update((f"ansible_{name}", piece_text(text, ANSIBLE_PLANNER_INDENT))
                for name, text in planner_runs.items())
    return fixes, runs
