"""VPC CIDR allocation for a cloned stack: the lowest free block of a pool."""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Address, IPv4Network

DEFAULT_POOL = IPv4Network("10.0.0.0/8")
"""Where new VPC CIDRs come from unless `--pool` says otherwise."""


class PoolExhausted(ValueError):
    """No block of the wanted size in the pool overlaps no taken CIDR."""


def allocate(pool: IPv4Network, prefixlen: int,
             taken: Mapping[str, IPv4Network]) -> IPv4Network:
    """The lowest /`prefixlen` block inside `pool` that overlaps none of `taken` (values are
    the CIDRs, keys name their owners). Raises PoolExhausted."""
    if prefixlen < pool.prefixlen:
        raise PoolExhausted(f"a /{prefixlen} does not fit in the pool {pool}")
    size = 2 ** (32 - prefixlen)
    used = sorted((cidr for cidr in taken.values() if cidr.overlaps(pool)),
                  key=lambda cidr: int(cidr.network_address))
    start = int(pool.network_address)
    end = int(pool.broadcast_address)
    while start + size - 1 <= end:
        candidate = IPv4Network((IPv4Address(start), prefixlen))
        clashes = [cidr for cidr in used if cidr.overlaps(candidate)]
        if not clashes:
            return candidate
        past = max(int(cidr.broadcast_address) for cidr in clashes) + 1
        start = -(-past // size) * size  # the next block boundary at or after `past`
    owners = ", ".join(f"{cidr} ({owner})" for owner, cidr in sorted(taken.items())
                       if cidr.overlaps(pool))
    raise PoolExhausted(f"no free /{prefixlen} left in the pool {pool}; taken: {owners}")


def translate(cidr: IPv4Network, old_vpc: IPv4Network,
              new_vpc: IPv4Network) -> IPv4Network | None:
    """`cidr` moved from `old_vpc` to the same offset in `new_vpc`, or None if it does not fit
    (it was outside `old_vpc`, or `new_vpc` is smaller)."""
    if not cidr.subnet_of(old_vpc):
        return None
    offset = int(cidr.network_address) - int(old_vpc.network_address)
    moved = int(new_vpc.network_address) + offset
    if moved % cidr.num_addresses or moved + cidr.num_addresses - 1 > int(
            new_vpc.broadcast_address):
        return None
    return IPv4Network((IPv4Address(moved), cidr.prefixlen))
