"""Where the kernel command line for the next boot is configured.

Samples::

    /etc/default/grub:   GRUB_CMDLINE_LINUX="crashkernel=auto rd.lvm.lv=rhel/root transparent_hugepage=never"
    /boot/loader/entries/<id>.conf (BLS, RHEL 8+):   options root=/dev/mapper/rhel-root ro transparent_hugepage=never
    /etc/kernel/cmdline:   root=UUID=... ro quiet
    /boot/grub/grub.conf (RHEL 6):   kernel /vmlinuz-2.6.32-71.el6.x86_64 ro root=/dev/sda2 elevator=deadline
    /boot/grub2/grub.cfg (RHEL 7, written by grub2-mkconfig)::

        set default="${saved_entry}"
        menuentry 'Red Hat Enterprise Linux Server (3.10.0-1160.el7.x86_64) 7.9 (Maipo)' --class red \
                --unrestricted $menuentry_id_option 'gnulinux-3.10.0-1160.el7.x86_64-advanced-6f9a' {
                load_video
                linux16 /vmlinuz-3.10.0-1160.el7.x86_64 root=/dev/mapper/rhel-root ro crashkernel=auto
                initrd16 /initramfs-3.10.0-1160.el7.x86_64.img
        }
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from .. import linear_re as re

_GRUB_KEYS = ("GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT")


# The kernel takes at most 4,096 characters of command line (COMMAND_LINE_SIZE on x86-64
# and ppc64le); a longer value is split into plain words without shlex, which reads one
# character at a time (about 12 s a MiB of a file written to stall the scan).
MAX_QUOTED_VALUE = 64 * 1024


def _split(value: str) -> list[str]:
    if len(value) > MAX_QUOTED_VALUE:
        return value.replace('"', " ").replace("'", " ").split()
    try:
        return shlex.split(value, comments=False, posix=True)
    except ValueError:  # unbalanced quotes: fall back to plain words
        return value.replace('"', " ").replace("'", " ").split()


def grub_defaults_args(text: str) -> list[str]:
    """Kernel arguments set by GRUB_CMDLINE_LINUX[_DEFAULT]; later assignments win."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("export "):
            line = line[len("export "):].strip()
        key, sep, value = line.partition("=")
        if sep and key in _GRUB_KEYS:
            words = _split(value)
            values[key] = " ".join(words)
    args: list[str] = []
    for key in _GRUB_KEYS:
        args.extend(values.get(key, "").split())
    return args


def bls_entry_args(text: str) -> list[str]:
    args: list[str] = []
    for raw in text.splitlines():
        parts = raw.strip().split(None, 1)
        if len(parts) == 2 and parts[0] == "options":
            args.extend(parts[1].split())
    return args


def bls_entry_field(text: str, name: str) -> str:
    """A BLS entry's ``version``, ``title``... ('' when absent)."""
    for raw in text.splitlines():
        parts = raw.strip().split(None, 1)
        if len(parts) == 2 and parts[0] == name:
            return parts[1].strip()
    return ""


def rpm_version_key(version: str) -> list[tuple[int, int, str]]:
    """A sort key that orders versions as rpmvercmp does (what GRUB's blscfg sorts BLS
    entries by, newest first): alternating digit and letter runs, a digit run newer than a
    letter run, digits compared as numbers; separators only split."""
    key: list[tuple[int, int, str]] = []
    for run in re.findall(r"[0-9]+|[A-Za-z]+", version):
        if run.isdigit():  # as rpmvercmp: leading zeros dropped, then the longer run is newer
            digits = run.lstrip("0")
            key.append((1, len(digits), digits))
        else:
            key.append((0, 0, run))
    return key


def cmdline_args(text: str) -> list[str]:
    """``/etc/kernel/cmdline`` and ``/proc/cmdline``: whitespace separated, ``#`` comments."""
    words: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0] if raw.lstrip().startswith("#") else raw
        words.extend(line.split())
    return words


def arg_value(args: list[str], name: str) -> str | None:
    """The value of the last ``name=value`` argument (the kernel takes the last one)."""
    found = None
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep and key == name:
            found = value
    return found


def grubenv_vars(text: str) -> dict[str, str]:
    """``/boot/grub2/grubenv``: ``name=value`` lines padded with '#' to 1 KiB."""
    variables: dict[str, str] = {}
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        key, sep, value = raw.partition("=")
        if sep and key.strip():
            variables[key.strip()] = value.strip()
    return variables


def expand_grubenv(args: list[str], variables: dict[str, str]) -> list[str]:
    """Expand ``$kernelopts`` / ``$tuned_params`` as GRUB does for RHEL 8 BLS entries."""
    expanded: list[str] = []
    for arg in args:
        if arg.startswith("$") and arg[1:].strip("{}") in variables:
            expanded.extend(variables[arg[1:].strip("{}")].split())
        else:
            expanded.append(arg)
    return expanded


@dataclass
class Menu:
    """A boot menu: the default as the configuration writes it, and each entry's title, id
    and kernel arguments, in order."""
    default: str = ""
    entries: list[tuple[str, list[str]]] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    def find(self, wanted: str) -> int | None:
        """The entry ``wanted`` names, as GRUB reads it: an index, a title or an id."""
        wanted = wanted.strip()
        if wanted == "":
            return 0
        if wanted.isascii() and wanted.isdigit() and len(wanted) <= 9:
            index = int(wanted)
            return index if index < len(self.entries) else None
        for index, (title, _) in enumerate(self.entries):
            if wanted in (title, self.ids[index]):
                return index
        return None


_GRUB2_KERNEL = ("linux", "linux16", "linuxefi")
_SET_DEFAULT = re.compile(r"""^\s*set\s+default=["']?([^"'\s]*)["']?\s*$""")


def grub2_menu(text: str) -> Menu:
    """A GRUB 2 ``grub.cfg``'s menu entries (those with a linux line) and its default."""
    menu = Menu()
    title: str | None = None
    entry_id = ""
    args: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        default = _SET_DEFAULT.match(line)
        if default and title is None:
            # "${saved_entry}" wins over a literal only when grubenv has one; keep the first
            # non-next_entry form, as RHEL's header sets next_entry then saved_entry.
            if default.group(1) not in ("${next_entry}", "$next_entry"):
                menu.default = default.group(1)
            continue
        if line.startswith("menuentry ") and line.endswith("{"):
            words = _split(line[:-1])
            title = words[1] if len(words) > 1 else ""
            entry_id = next((words[i + 1] for i, word in enumerate(words[:-1])
                             if word == "$menuentry_id_option"), "")
            args = None
            continue
        if title is not None:
            words = line.split()
            if words and words[0] in _GRUB2_KERNEL and len(words) >= 2:
                args = words[2:]
            elif line == "}":
                if args is not None:
                    menu.entries.append((title, args))
                    menu.ids.append(entry_id)
                title = None
    return menu


_LEGACY_LINE = re.compile(r"^([A-Za-z_]+)\s*(?:=|\s)\s*(.*)$")


def legacy_grub_menu(text: str) -> Menu:
    """A GRUB 0.97 ``grub.conf``: ``default=N`` and each ``title`` with its ``kernel`` line."""
    menu = Menu(default="0")
    title: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or not line:
            continue
        match = _LEGACY_LINE.match(line)  # "key value" or "key=value"
        if not match:
            continue
        key, value = match.groups()
        if key == "default" and title is None:
            menu.default = value.strip()
        elif key == "title":
            title = value.strip()
        elif key == "kernel" and title is not None:
            words = value.split()
            menu.entries.append((title, words[1:]))
            menu.ids.append("")
            title = None
    return menu
