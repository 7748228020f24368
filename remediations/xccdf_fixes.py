"""The data stream's fixes: each rule's bash block and Ansible tasks, with site values and
the library's shared pieces left as marks that content/xccdf.py turns into XCCDF <sub>s
(oscap fills them in when it assembles or runs a fix)."""

from __future__ import annotations

import re
import shutil
import subprocess

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
from .rendering import FixError, FixInput, environment
from .site_values import SAS_DATA_DIRS_ENV, SAS_DIRS_ENV, SUB, fix_values

# The shared pieces' forms: a bash fix holds them as they are; an Ansible fix holds its
# planner in a YAML block scalar, every line of which is indented (rule_tasks.yml.j2).
ANSIBLE_PLANNER_INDENT = 6
_MARKED = re.compile("\x01([A-Za-z0-9_]+)\x01")


def _in_form(text: str, form: str, neutral: frozenset[str] = frozenset()) -> str:
    """`text` with each shared piece's mark naming the piece in `form` (sh or ansible), or
    its one form where it is `neutral`."""
    return _MARKED.sub(lambda match: match.group(0) if match.group(1) in neutral
                       else f"\x01{form}_{match.group(1)}\x01", text)


# The bash fix holds a piece in the Ansible form too where indenting it changes nothing
# bash reads: `declare -f` prints a function as bash parsed it, strings and here-documents
# verbatim and code re-indented, so the two forms of such a piece print the same. The
# others (an awk program, a here-document) keep a form each. One form was some 110 KB of
# the data stream, and so of every ARF (#66).
_SAME_PARSE = r"""
while (($# >= 3)); do
    eval "__sascheck_piece() {
$2
}" && plain=$(declare -f __sascheck_piece) &&
    eval "__sascheck_piece() {
$3
}" && [[ $plain == "$(declare -f __sascheck_piece)" ]] && printf '%s\n' "$1"
    shift 3
done
"""


def indentation_inert(pieces: dict[str, str]) -> frozenset[str]:
    """The names of ``pieces`` that bash parses the same with the planner's indentation.
    Only their definition is parsed (each is wrapped in a function that is never called)."""
    arguments = [part for name, text in sorted(pieces.items())
                 for part in (name, text, piece_text(text, ANSIBLE_PLANNER_INDENT))]
    bash = shutil.which("bash")
    if bash is None:
        raise FixError("building the data stream needs bash on PATH (it asks bash which fix "
                       "pieces it parses alike when indented)")
    parsed = subprocess.run([bash, "-c", _SAME_PARSE, "bash", *arguments],
                            capture_output=True, text=True, check=True)
    return frozenset(parsed.stdout.split())


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
    pieces = shared_pieces(shell_layout(), common)
    pieces[TUNED_PROFILES_PIECE] = tuned_profile_assignments(_xccdf_fix_input(catalogue),
                                                             environment())
    neutral = indentation_inert(pieces)
    fixes, runs = _rule_fixes(catalogue, common, neutral)
    return fixes, {**_shared_texts(pieces, neutral), **runs}


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


def _shared_texts(pieces: dict[str, str], neutral: frozenset[str]) -> dict[str, str]:
    """The shared pieces by the name a fix's mark gives them: in an Ansible fix a piece's
    lines are indented as the planner's lines are; a `neutral` piece has that form alone."""
    texts = {}
    for name, text in pieces.items():
        if name in neutral:
            texts[name] = piece_text(text, ANSIBLE_PLANNER_INDENT)
        else:
            texts[f"sh_{name}"] = piece_text(text)
            texts[f"ansible_{name}"] = piece_text(text, ANSIBLE_PLANNER_INDENT)
    return texts


def _rule_fixes(catalogue: Catalogue, common: frozenset[str], neutral: frozenset[str]
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
            ("urn:xccdf:fix:script:sh", _in_form(block, "sh", neutral)),
            ("urn:xccdf:fix:script:ansible",
             _in_form(tasks.rstrip("\n") + "\n", "ansible", neutral))]
    runs = {f"sh_{name}": piece_text(text) for name, text in block_runs.items()}
    runs.update((f"ansible_{name}", piece_text(text, ANSIBLE_PLANNER_INDENT))
                for name, text in planner_runs.items())
    return fixes, runs
