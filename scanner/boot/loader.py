"""The kernel command line that will boot: which boot loader configuration is in force on
this host and which of its entries boots next. One model, used by every rule that reads
kernel arguments (THP at boot, elevator=).

- BLS (RHEL 8, 9): ``/boot/loader/entries/*.conf``, ``$kernelopts`` and ``$tuned_params``
  expanded from grubenv. The entry that boots is grubenv's ``next_entry`` or
  ``saved_entry`` (an entry's id: its file name without ``.conf``, as ``grubby
  --set-default`` writes it), else the newest by ``version`` (blscfg sorts with rpmvercmp).
- GRUB 2 without BLS (RHEL 7): the menu ``grub2-mkconfig`` wrote (``/boot/grub2/grub.cfg``,
  or ``/boot/efi/EFI/<vendor>/grub.cfg`` on an EFI boot); the entry that boots is grub.cfg's
  ``set default``: ``${saved_entry}`` (or a one-time ``next_entry``) from grubenv, an index,
  a title or an id; one that matches nothing boots the first entry, as GRUB does.
  ``/etc/default/grub`` is only the template grub2-mkconfig reads.
- GRUB 0.97 (RHEL 5, 6): ``grub.conf``'s ``default=N`` picks the ``title`` that boots; on an
  EFI boot the EFI ``grub.conf``, else the file ``/etc/grub.conf`` points at (grubby keeps
  that link current), else ``/boot/grub/grub.conf``.
- None of these (an image without /boot): the templates, ``/etc/default/grub`` and
  ``/etc/kernel/cmdline``, are what the next generated configuration will hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...rules.host_layout import (
    BLS_ENTRIES,
    EFI_FIRMWARE,
    EFI_VENDOR_DIRS,
    GRUB2_CFG,
    GRUB_DEFAULTS,
    GRUBENV,
    KERNEL_CMDLINE,
    LEGACY_GRUB_CONFS,
)
from .. import linear_re as re
from ..parsers import boot
from ..sources.hostroot import FactError, HostRoot


@dataclass(frozen=True)
class BootSource:
    path: str  # the file, and the entry within it
    args: tuple[str, ...]


@dataclass
class BootConfig:
    loader: str  # bls | grub2 | grub-legacy | template
    entries: list[BootSource]  # what decides the next boot
    templates: list[BootSource]  # /etc/default/grub, /etc/kernel/cmdline
    notes: list[str] = field(default_factory=list)

    @property
    def deciding(self) -> list[BootSource]:
        return self.entries if self.loader != "template" else self.templates


def _read(root: HostRoot, path: str, problems: list[str], limit: int = 1024 * 1024
          ) -> str | None:
    try:
        return root.read_optional(path, limit)
    except FactError as exc:
        problems.append(str(exc))
        return None


def _efi_files(root: HostRoot, name: str) -> list[str]:
    """``name`` in each vendor directory of the EFI system partition, when this is an EFI
    boot (the firmware directory exists)."""
    if not root.is_dir(EFI_FIRMWARE):
        return []
    return [f"{directory}/{name}" for directory in EFI_VENDOR_DIRS]


def _grubenv(root: HostRoot, problems: list[str]) -> dict[str, str]:
    for path in (*_efi_files(root, "grubenv"), GRUBENV):
        text = _read(root, path, problems, 64 * 1024)
        if text is not None:
            return boot.grubenv_vars(text)
    return {}


def _default_entry(root: HostRoot, problems: list[str], notes: list[str],
                   paths: tuple[str, ...], parse: Callable[[str], boot.Menu],
                   resolve: Callable[[str], str]) -> list[BootSource]:
    """The entry that boots, from the first of ``paths`` that exists: the menu's default
    (``resolve`` turns what the file says into what GRUB looks up); one that matches no
    entry boots the first, as GRUB does."""
    for path in paths:
        text = _read(root, path, problems)
        if text is None:
            continue
        menu = parse(text)
        if not menu.entries:
            notes.append(f"{path}: no menu entry with a kernel line")
            return []
        wanted = resolve(menu.default)
        index = menu.find(wanted)
        if index is None:
            notes.append(f"{path}: default {wanted!r} matches no entry; GRUB boots the first")
            index = 0
        title, args = menu.entries[index]
        return [BootSource(f"{path} (default entry {index}: {title})", tuple(args))]
    return []


def _grub2(root: HostRoot, problems: list[str], notes: list[str]) -> list[BootSource]:
    def saved(default: str) -> str:
        if default not in ("${saved_entry}", "$saved_entry"):
            return default
        grubenv = _grubenv(root, problems)
        return grubenv.get("next_entry") or grubenv.get("saved_entry", "")

    return _default_entry(root, problems, notes, (*_efi_files(root, "grub.cfg"), GRUB2_CFG),
                          boot.grub2_menu, saved)


def _legacy(root: HostRoot, problems: list[str], notes: list[str]) -> list[BootSource]:
    paths = (*_efi_files(root, "grub.conf"), *reversed(LEGACY_GRUB_CONFS))
    return _default_entry(root, problems, notes, paths, boot.legacy_grub_menu, str)


def _bls_default(root: HostRoot, paths: list[str], problems: list[str],
                 notes: list[str]) -> list[BootSource]:
    """The BLS entry that boots next (an entry that cannot be read is left out)."""
    grubenv = _grubenv(root, problems)
    fallback = None if "kernelopts" in grubenv else _kernelopts_fallback(root, problems)
    if fallback:
        grubenv = {**grubenv, "kernelopts": fallback[1]}
    # (id, version, path, args as GRUB expands them, whether they name $kernelopts)
    entries: list[tuple[str, str, str, list[str], bool]] = []
    for path in paths:
        text = _read(root, path, problems)
        if text is not None:
            entry_id = path.rsplit("/", 1)[1][:-len(".conf")]
            args = boot.bls_entry_args(text)
            entries.append((entry_id, boot.bls_entry_field(text, "version"), path,
                            boot.expand_grubenv(args, grubenv),
                            any(arg in ("$kernelopts", "${kernelopts}") for arg in args)))
    if not entries:
        return []
    wanted = grubenv.get("next_entry") or grubenv.get("saved_entry", "")
    chosen = next((entry for entry in entries if entry[0] == wanted), None)
    if chosen is None:
        if wanted:
            notes.append(f"grubenv's saved_entry {wanted!r} matches no BLS entry; GRUB boots "
                         "the newest")
        chosen = max(entries, key=lambda entry: (boot.rpm_version_key(entry[1]), entry[0]))
        why = "the newest entry"
    else:
        why = "grubenv's saved_entry"
    if fallback is not None and chosen[4]:
        why += f"; $kernelopts from {fallback[0]}, grubenv having none"
    return [BootSource(f"{chosen[2]} ({why})", tuple(chosen[3]))]


# RHEL 8's grub2-mkconfig (/etc/grub.d/10_linux with BLS) writes into grub.cfg:
#   if [ -z "${kernelopts}" ]; then
#     set kernelopts="root=... ro crashkernel=auto ..."
#   fi
# so an entry's $kernelopts is grubenv's, else that line's.
_KERNELOPTS_FALLBACK = re.compile(
    r'^[ \t]*if \[ -z "\$\{kernelopts\}" \]; then[ \t]*\n[ \t]*set kernelopts="([^"\n]*)"',
    re.MULTILINE)


def _kernelopts_fallback(root: HostRoot, problems: list[str]) -> tuple[str, str] | None:
    """(grub.cfg, its fallback kernelopts) where grub.cfg sets one."""
    for path in (*_efi_files(root, "grub.cfg"), GRUB2_CFG):
        text = _read(root, path, problems)
        if text is None:
            continue
        match = _KERNELOPTS_FALLBACK.search(text)
        return (path, match.group(1)) if match else None
    return None


def collect_boot(root: HostRoot, problems: list[str]) -> BootConfig:
    templates = []
    for path, parse in ((GRUB_DEFAULTS, boot.grub_defaults_args),
                        (KERNEL_CMDLINE, boot.cmdline_args)):
        text = _read(root, path, problems)
        if text is not None:
            templates.append(BootSource(path, tuple(parse(text))))
    notes: list[str] = []
    try:
        bls = root.glob_files(BLS_ENTRIES, ".conf")
    except FactError as exc:
        problems.append(str(exc))
        bls = []
    if bls:
        return BootConfig("bls", _bls_default(root, bls, problems, notes), templates, notes)
    entries = _grub2(root, problems, notes)
    if entries:
        return BootConfig("grub2", entries, templates, notes)
    entries = _legacy(root, problems, notes)
    if entries:
        return BootConfig("grub-legacy", entries, templates, notes)
    return BootConfig("template", [], templates, notes)
