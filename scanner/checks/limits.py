"""The SAS accounts' resource limits where SAS's processes get them: pam_limits for login
sessions (Linux-PAM modules/pam_limits/pam_limits.c), systemd for the services it starts,
and the running processes' own /proc/PID/limits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...rules.host_layout import INHERITED_HARD, INHERITED_SOFT, LIMIT_ITEMS
from .. import linear_re as re
from ..facts import Facts
from ..results import Evidence, Outcome, Verdict, combine_judged, summarise
from ..system.limits import Account, LimitsFacts, PamLine

UNLIMITED = float("inf")
HOW_TO_NAME = ("no SAS account is known (no SAS configuration found to take its owner "
               "from): name them with --set sas_accounts=...")
# process_limit's ranks: a user entry (or uid range) beats a group entry beats '*'.
_USER, _GROUP, _DEFAULT, _NONE = 0, 1, 4, 6


def _rank(domain: str, account: Account) -> int | None:
    """How specific ``domain`` is for ``account`` (pam_limits' LIMITS_DEF_*), None where
    it does not apply. '%' domains limit logins only."""
    if domain == account.name:
        return _USER
    if domain == "*":
        return _DEFAULT
    group = domain.startswith("@")
    spec = domain[1:] if group else domain
    if ":" in spec:  # parse_uid_range: min:max, min: (and up), :id (exactly)
        low, _, high = spec.partition(":")
        number = account.gid if group else account.uid
        if number is None or not (low or high).isdigit():
            return None
        inside = (number == int(high) if not low else
                  number >= int(low) and (not high or number <= int(high)))
        return (_GROUP if group else _USER) if inside else None
    if group and spec in account.groups:
        return _GROUP
    return None


def _pam_value(text: str) -> float | None:
    """A limit's value as process_limit reads it (pam_limits.c lines 588-607 at v1.5.1):
    "-1", "-", "unlimited" and "infinity" are RLIM_INFINITY; else strtoull's digits."""
    if text in ("-1", "-", "unlimited", "infinity"):
        return UNLIMITED
    match = re.match(r"\d+", text)
    return int(match.group()) if match else None  # strtoull: leading digits, else skipped


def pam_limit(lines: Sequence[PamLine], account: Account, item: str
              ) -> tuple[float | None, str, float | None, list[str]]:
    """(soft, its source, hard, notes) a PAM session of ``account`` gets from pam_limits;
    None where no line sets it (the session keeps what it inherits)."""
    soft: float | None = None
    hard: float | None = None
    soft_rank = hard_rank = _NONE
    source, notes = "", []
    for line in lines:
        if line.no_limit:
            # parse_config_file returns PAM_IGNORE for a no-limit line naming the account
            # (its name, a group of it, a uid or gid range; never '*' or '%'), and
            # pam_sm_open_session returns at once: no file after it is read, and no limit
            # of any file is set (pam_limits.c lines 897-953 and 1071-1099 at v1.5.1)
            if line.domain != "*" and _rank(line.domain, account) is not None:
                return None, line.source, None, [
                    f"{line.source}: '{line.domain} -' tells pam_limits to set no limit for "
                    f"{account.name}: it stops reading there, and the session keeps what "
                    "it inherits"]
            continue
        if line.item != item or line.type not in ("soft", "hard", "-"):
            continue
        rank = _rank(line.domain, account)
        if rank is None:
            continue
        value = _pam_value(line.value)
        if value is None:
            notes.append(f"{line.source}: '{line.value}' is not a limit (pam_limits skips it)")
            continue
        if line.type in ("soft", "-"):
            if soft_rank < rank:
                continue  # a more specific entry holds (and, for '-', the hard one too)
            soft, soft_rank, source = value, rank, line.source
        if line.type in ("hard", "-"):
            if hard_rank < rank:
                continue
            hard, hard_rank = value, rank
    return soft, source, hard, notes


def inherited_hard(item: str, kernel: str) -> float | None:
    """The hard limit a session inherits where pam_limits sets none (INHERITED_HARD)."""
    if not kernel:
        return None
    for prefix, value in INHERITED_HARD[item]:
        if kernel.startswith(prefix):
            return None if value is None else _pam_value(value)
    return None


def _shown(value: float) -> str:
    return "unlimited" if value == UNLIMITED else str(int(value))


def _systemd_value(text: str, per_unit: int) -> float | None:
    """The soft part of a systemd Limit*= value, in the item's unit (systemd.exec(5):
    'soft:hard' or one value for both, 'infinity', sizes with K, M, G, T in 1024s)."""
    soft = text.split(":", 1)[0].strip().lower()
    if soft == "infinity":
        return UNLIMITED
    match = re.fullmatch(r"(\d+)([kmgt]?)", soft)
    if not match:
        return None
    scale: int = 1024 ** " kmgt".index(match.group(2) or " ")
    return int(match.group(1)) * scale // per_unit


def _judge(subject: str, source: str, value: float | None, wanted: int, note: str = ""
           ) -> Evidence:
    if value is None:
        return Evidence(subject, source, "unknown", Verdict.NOTCHECKED, note)
    verdict = Verdict.PASS if value >= wanted else Verdict.FAIL
    return Evidence(subject, source, _shown(value), verdict, note)


def _sessions(facts: Facts, item: str, wanted: int) -> list[Evidence]:
    limits, inherited = facts.limits, INHERITED_SOFT[item]
    evidence = []
    for account in limits.accounts:
        soft, source, hard, notes = pam_limit(limits.pam, account, item)
        subject = f"PAM sessions of {account.name}"
        if account.uid is None:
            notes.append(f"{account.name} is not in /etc/passwd: its groups and uid are "
                         "not known here")
        if item == "nofile":
            refused = _nofile_refused(limits, hard, notes)
            if refused is not None:
                evidence.append(Evidence(subject, source, *refused))
                continue
            if hard == UNLIMITED:  # given as fs.nr_open by this pam_limits
                hard = limits.nr_open[0]
                soft = hard if soft == UNLIMITED else soft
        init = limits.init.get(LIMIT_ITEMS[item][1])
        if soft is None:
            source = source or "nothing in limits.conf or limits.d"
            if init and item == "nproc":  # what init has, services and sessions keep
                soft, source = _proc_value(init[0], 1), f"{source}; /proc/1/limits"
            else:
                soft = inherited
            notes.append("the session keeps the soft limit it inherits"
                         + ("" if soft is not None else ", which the kernel sizes "
                            "from memory"))
        if hard is None:
            hard = (_proc_value(init[1], 1) if init and item == "nproc"
                    else inherited_hard(item, facts.host.kernel))
            if hard is None and soft is not None and soft >= wanted:
                notes.append("no hard limit is set, and the one the session inherits (so "
                             "whether pam_limits lowers the soft one to it) is not known for "
                             f"kernel {facts.host.kernel or '(unknown)'}: set one")
                soft = None
        if soft is not None and hard is not None and soft > hard:
            notes.append(f"above the hard limit {_shown(hard)}: pam_limits lowers it")
            soft = hard
        evidence.append(_judge(subject, source, soft, wanted, "; ".join(notes)))
    return evidence


REFUSED = ("pam_limits then denies the session (setup_limits fails, PAM_PERM_DENIED): no "
           "SAS session opens")


def _nofile_refused(limits: LimitsFacts, hard: float | None, notes: list[str]
                    ) -> tuple[str, Verdict, str] | None:
    """(actual, verdict, note) where the open-files hard limit pam_limits sets is one the
    kernel refuses (kernel/sys.c do_prlimit: EPERM above fs.nr_open), or where that cannot
    be told; None where the session gets it. Only a hard limit pam_limits sets counts: a
    soft one above the hard is lowered to it before setrlimit."""
    nr_open, where = limits.nr_open
    if hard == UNLIMITED:
        maps = limits.nofile_unlimited_as_nr_open
        if maps is True:
            notes.append(f"pam_limits gives an unlimited nofile as fs.nr_open ({nr_open}, "
                         f"{where}; linux-pam 1.5.2 on, or a backport in this build)")
            return None
        if maps is False:
            return ("session refused", Verdict.FAIL,
                    "this pam_limits (linux-pam before 1.5.2, no fs.nr_open in its module) "
                    "asks the kernel for unlimited open files, which it refuses above "
                    f"fs.nr_open ({nr_open}): {REFUSED}; set a number, at most {nr_open}")
        return ("unknown", Verdict.NOTCHECKED,
                "an unlimited nofile opens the session only where pam_limits gives it as "
                "fs.nr_open (linux-pam 1.5.2 on); before that the kernel refuses it and "
                f"pam_limits the session; which this host has cannot be told: {maps}")
    if hard is not None and hard > nr_open:
        return ("session refused", Verdict.FAIL,
                f"a hard limit of {int(hard)} open files is above fs.nr_open ({nr_open}, "
                f"{where}), which the kernel refuses (do_prlimit: EPERM): {REFUSED}")
    return None


def _services(facts: Facts, item: str, wanted: int) -> list[Evidence]:
    limits = facts.limits
    directive, row, _, per_unit = LIMIT_ITEMS[item]
    init = limits.init.get(row)
    inherited = (_proc_value(init[0], per_unit) if init and item == "nproc"
                 else INHERITED_SOFT[item])
    evidence = []
    for service in limits.services:
        text, source = (service.settings.get(directive)
                        or limits.defaults.get("Default" + directive) or ("", ""))
        subject = f"service {service.unit} (User={service.user})"
        if not text:
            evidence.append(_judge(subject, "systemd's default", inherited, wanted,
                                   f"no {directive}= nor Default{directive}=: the service "
                                   "keeps the soft limit it inherits"))
            continue
        value = _systemd_value(text, per_unit)
        if value is None:
            evidence.append(Evidence(subject, source, text, Verdict.ERROR,
                                     f"{directive}={text}: not a limit systemd reads"))
            continue
        evidence.append(_judge(subject, source, value, wanted, f"{directive}={text}"))
    return evidence


def _proc_value(text: str, per_unit: int) -> float | None:
    """A /proc/PID/limits column in the item's unit."""
    if text == "unlimited":
        return UNLIMITED
    return int(text) // per_unit if text.isdigit() else None


def _processes(facts: Facts, item: str, wanted: int) -> list[Evidence]:
    _, row, _, per_unit = LIMIT_ITEMS[item]
    evidence = []
    for process in facts.limits.processes or []:
        soft = process.rows.get(row, ("", ""))[0]
        source = f"/proc/{process.pid}/limits"
        subject = f"running {process.name or 'process'} {process.pid} ({process.user})"
        value = _proc_value(soft, per_unit)
        if value is not None:
            evidence.append(_judge(subject, source, value, wanted,
                                   "" if value >= wanted else "restart it to take a new limit"))
        else:
            evidence.append(Evidence(subject, source, soft or "missing", Verdict.ERROR,
                                     f"no '{row}' row to read"))
    return evidence


def account_limit(params: Mapping[str, Any], facts: Facts,
                  values: Mapping[str, Any]) -> Outcome:
    item: str = params["item"]
    wanted = int(values[params["value_from"]])
    unit = LIMIT_ITEMS[item][2]
    expected = f"the SAS accounts' soft {item} limit is at least {wanted} {unit}"
    limits = facts.limits
    if not limits.accounts:
        return Outcome(Verdict.NOTCHECKED, expected, "no SAS account known", [Evidence(
            "SAS accounts", limits.accounts_source, "none", Verdict.NOTCHECKED, HOW_TO_NAME)],
            message=HOW_TO_NAME)
    if limits.problems:  # an unreadable limits file or unit: no verdict from what is left
        why = "; ".join(limits.problems[:3])
        return Outcome(Verdict.ERROR, expected, "unreadable", [Evidence(
            "SAS accounts' limits", "the files that set them", "unreadable", Verdict.ERROR,
            why)], message=why)
    evidence = [*_sessions(facts, item, wanted), *_services(facts, item, wanted),
                *_processes(facts, item, wanted)]
    result = combine_judged(evidence, Verdict.NOTCHECKED)
    accounts = ", ".join(account.name for account in limits.accounts)
    if result == Verdict.PASS:
        actual = f"at least {wanted} for {accounts}"
    elif result == Verdict.NOTCHECKED:
        actual = "; ".join(f"{e.subject}: unknown" for e in evidence
                           if e.verdict == Verdict.NOTCHECKED)
    else:
        actual = summarise(evidence)
    message = next((e.note for e in evidence if e.verdict == result and e.note), "")
    return Outcome(result, expected, actual, evidence, message)
