"""Address ranges a VPC may not use.

Source: Alibaba Cloud VPC "Create and manage a VPC" (help.aliyun.com/en/vpc/vpc-and-vswitch,
retrieved 2026-12-01): "You cannot use 100.64.0.0/10, 224.0.0.0/4, 127.0.0.0/8, or
169.254.0.0/16 as the IPv4 CIDR block for a VPC"; RFC 1918 ranges are recommended, other
(custom) ranges are allowed. 0.0.0.0/8 ("this network", RFC 1122 3.2.1.3) and 240.0.0.0/4
(reserved, RFC 1112 section 4) are not addresses a host may have at all.
"""

from __future__ import annotations

from ipaddress import IPv4Network

VPC_RESERVED_RANGES: dict[IPv4Network, str] = {
    IPv4Network("0.0.0.0/8"): "'this network' (RFC 1122)",
    IPv4Network("100.64.0.0/10"): "reserved by Alibaba Cloud for its services",
    IPv4Network("127.0.0.0/8"): "loopback",
    IPv4Network("169.254.0.0/16"): "link-local (instance metadata)",
    IPv4Network("224.0.0.0/4"): "multicast",
    IPv4Network("240.0.0.0/4"): "reserved (RFC 1112)",
}
"""Ranges a VPC CIDR may not overlap, with what each one is."""
PRIVATE_RANGES = (IPv4Network("10.0.0.0/8"), IPv4Network("172.16.0.0/12"),
                  IPv4Network("192.168.0.0/16"))
"""The RFC 1918 ranges Alibaba Cloud recommends for VPCs."""


def reserved_overlap(cidr: IPv4Network) -> tuple[IPv4Network, str] | None:
    """The reserved range `cidr` overlaps, with what it is, or None."""
    return next(((reserved, what) for reserved, what in VPC_RESERVED_RANGES.items()
                 if cidr.overlaps(reserved)), None)
