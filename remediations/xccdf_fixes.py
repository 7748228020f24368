"""The data stream's fixes: each rule's bash block and Ansible tasks, with site values and
the library's shared pieces left as marks that content/xccdf.py turns into XCCDF <sub>s
(oscap fills them in when it assembles or runs a fix)."""

from __future__ import annotations

import re

from ..rules import Catalogue, Rule
from ..rules.host_layout import shell_layout
from .bash_library import (
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
    return _rule_fixes(catalogue, common), _shared_texts(catalogue, common)


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


def _rule_fixes(catalogue: Catalogue, common: frozenset[str]) -> XccdfFixes:
    """Each rule's bash and Ansible fix: values come from XCCDF <sub> elements (marked with
    SUB), so `oscap xccdf generate fix` fills them in, and so does the library (marked with
    SHARED: _shared_texts). A rule whose remedy is work for a person has none: its XCCDF
    fixtext says what to do."""
    env = environment()
    fixes: XccdfFixes = {rule_id: [] for rule_id in catalogue.rules}
    for rule in _fixed_rules(catalogue):
        fix = _xccdf_fix_input(catalogue, (rule.id,))
        planner = bash_script(catalogue, fix, "env", common).rstrip("\n")
        tasks = env.get_template("ansible/rule_tasks.yml.j2").render(
            rule=rule, planner=planner, planner_indent=ANSIBLE_PLANNER_INDENT,
            sas_dirs_env=SAS_DIRS_ENV, sas_data_dirs_env=SAS_DATA_DIRS_ENV, sub=SUB,
            revertable=False, tags=task_tags(rule),
            site_values=fix_values(catalogue, (rule.id,)))
        fixes[rule.id] = [
            ("urn:xccdf:fix:script:sh",
             _in_form(bash_script(catalogue, fix, "xccdf", common), "sh")),
            ("urn:xccdf:fix:script:ansible", _in_form(tasks.rstrip("\n") + "\n", "ansible"))]
    return fixes
