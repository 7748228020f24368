"""The KVM guests libvirt defines on this host (/etc/libvirt/qemu/*.xml), parsed."""

from __future__ import annotations

from ...rules.host_layout import LIBVIRT_DEFINED_DOMAINS
from ..parsers.libvirt import Domain, DomainXmlError, parse_domain
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable

DOMAIN_LIMIT = 4 * 1024 * 1024


def collect_guests(root: HostRoot, problems: list[str]) -> dict[str, Domain | Unavailable]:
    guests: dict[str, Domain | Unavailable] = {}
    try:
        paths = root.glob_files(LIBVIRT_DEFINED_DOMAINS, ".xml")
    except FactError as exc:
        problems.append(str(exc))
        return guests
    for path in paths:
        try:
            guests[path] = parse_domain(root.read_bytes(path, DOMAIN_LIMIT))
        except FactError as exc:
            guests[path] = Unavailable(str(exc))
        except DomainXmlError as exc:
            guests[path] = Unavailable(f"{path}: {exc}")
    return guests
