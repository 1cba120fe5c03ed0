"""How much of the public internet a set of source CIDRs admits: one judgement of
"open to the world", by address space rather than by spelling.

`0.0.0.0/0`, `0.0.0.0/1` + `128.0.0.0/1`, `0.0.0.0/4`, `::/1` and `2000::/3` are all
world-open; `10.0.0.0/8` is not (it holds no public address). The stack schema, the
validators, the building blocks and the policy rules all call `world_open`.

Public space (standard library `ipaddress` arithmetic, no lists of spellings):
- IPv4: everything outside the IANA IPv4 Special-Purpose Address Registry blocks that are
  not globally reachable, plus multicast and the reserved 240.0.0.0/4 (RFC 6890, RFC 5771,
  RFC 1112; registry read 2026-12).
- IPv6: the global unicast space 2000::/3 (IANA IPv6 Address Space) minus the documentation
  prefixes 2001:db8::/32 (RFC 3849) and 3fff::/20 (RFC 9637).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network, collapse_addresses, ip_network

Network = IPv4Network | IPv6Network

DEFAULT_WIDEST_PREFIX = 8
"""By default a source set may admit at most as many public addresses as one /8 holds
(2**24 for IPv4, 2**120 for IPv6); more is world-open."""

_NOT_PUBLIC_V4 = ("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
                  "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24",
                  "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
                  "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4")
_GLOBAL_UNICAST_V6 = "2000::/3"
_NOT_PUBLIC_V6 = ("2001:db8::/32", "3fff::/20")


def _overlap(a: Network, b: Network) -> int:
    """Addresses two CIDRs share (CIDRs either nest or are disjoint)."""
    if a.version != b.version:
        return 0
    if a.subnet_of(b):  # type: ignore[arg-type]
        return a.num_addresses
    if b.subnet_of(a):  # type: ignore[arg-type]
        return b.num_addresses
    return 0


def _complement(space: Network, holes: Iterable[str]) -> tuple[Network, ...]:
    """`space` without `holes`, as disjoint networks."""
    pieces: list[Network] = [space]
    for hole in (ip_network(h) for h in holes):
        next_pieces: list[Network] = []
        for piece in pieces:
            if _overlap(hole, piece) == 0:
                next_pieces.append(piece)
            elif hole.subnet_of(piece):  # type: ignore[arg-type]
                next_pieces.extend(piece.address_exclude(hole))  # type: ignore[arg-type]
            # else the piece lies inside the hole: dropped
        pieces = next_pieces
    return tuple(collapse_addresses(pieces))  # type: ignore[type-var]


PUBLIC_SPACE: dict[int, tuple[Network, ...]] = {
    4: _complement(IPv4Network("0.0.0.0/0"), _NOT_PUBLIC_V4),
    6: _complement(IPv6Network(_GLOBAL_UNICAST_V6), _NOT_PUBLIC_V6),
}
"""IP version -> the public address space as disjoint networks."""
PUBLIC_TOTAL = {version: sum(n.num_addresses for n in nets)
                for version, nets in PUBLIC_SPACE.items()}
"""IP version -> number of public addresses."""


def parse_cidr(value: object) -> Network | None:
    """A CIDR (or bare address) as a network, host bits ignored as the cloud does; None if
    `value` is not one."""
    if isinstance(value, (IPv4Network, IPv6Network)):
        return value
    if not isinstance(value, str):
        return None
    try:
        return ip_network(value.strip(), strict=False)
    except ValueError:
        return None


@dataclass(frozen=True)
class Exposure:
    """The public addresses one IP version's sources admit."""

    version: int
    public: int
    """Public addresses admitted (each counted once)."""

    @property
    def share(self) -> float:
        """Fraction of all public addresses of the version."""
        return self.public / PUBLIC_TOTAL[self.version]

    @property
    def whole(self) -> bool:
        """True if every public address is admitted."""
        return self.public == PUBLIC_TOTAL[self.version]


def exposure(cidrs: Iterable[object]) -> list[Exposure]:
    """Public addresses admitted by the union of `cidrs`, per IP version present (values that
    are not CIDRs are ignored)."""
    networks = [n for n in (parse_cidr(c) for c in cidrs) if n is not None]
    found = []
    for version in (4, 6):
        union = list(collapse_addresses(  # type: ignore[type-var]
            n for n in networks if n.version == version))
        if union:
            public = sum(_overlap(n, p) for n in union for p in PUBLIC_SPACE[version])
            found.append(Exposure(version, public))
    return found


def world_open(cidrs: Iterable[object],
               widest_prefix: float = DEFAULT_WIDEST_PREFIX) -> str | None:
    """Why the union of `cidrs` is open to the world, or None if it is not.

    World-open: it admits every public IPv4 (or IPv6) address, or more public addresses than
    one /`widest_prefix` network holds (default /8). The reason reads as the end of a
    sentence: "covers all public IPv4 space" / "covers 12.5% of public IPv4 space, more than
    a /8".
    """
    widest_prefix = int(widest_prefix)  # a policy config number may arrive as 8.0
    for found in exposure(cidrs):
        family = f"IPv{found.version}"
        if found.whole:
            return f"covers all public {family} space"
        bits = 32 if found.version == 4 else 128
        if found.public > 2 ** (bits - widest_prefix):
            return (f"covers {100 * found.share:.3g}% of public {family} space, more than "
                    f"a /{widest_prefix}")
    return None
