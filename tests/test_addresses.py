"""World-open is judged by address space: every spelling of "the whole internet" counts,
private and documentation space does not."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from gpu_infra_facts.addresses import PUBLIC_TOTAL, exposure, parse_cidr, world_open


@pytest.mark.parametrize("cidrs, reason", [
    (["0.0.0.0/0"], "covers all public IPv4 space"),
    (["0.0.0.0/1", "128.0.0.0/1"], "covers all public IPv4 space"),
    (["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"], "covers all public IPv4 space"),
    (["0.0.0.0/1"], "covers 56.5% of public IPv4 space, more than a /8"),
    (["0.0.0.0/4"], "covers 6.34% of public IPv4 space, more than a /8"),
    (["11.0.0.0/8", "12.0.0.0/8"], "covers 0.906% of public IPv4 space, more than a /8"),
    (["::/0"], "covers all public IPv6 space"),
    (["::/1"], "covers all public IPv6 space"),
    (["2000::/3"], "covers all public IPv6 space"),
    (["2000::/4", "3000::/4"], "covers all public IPv6 space"),
    (["2000::/4"], "covers 50% of public IPv6 space, more than a /8"),
    ([IPv4Network("0.0.0.0/0")], "covers all public IPv4 space"),
    (["1.2.3.4/1"], "covers 56.5% of public IPv4 space, more than a /8"),  # host bits set
])
def test_world_open_in_any_spelling(cidrs, reason):
    assert world_open(cidrs) == reason


@pytest.mark.parametrize("cidrs", [
    ["10.0.0.0/8"], ["11.0.0.0/8"], ["10.0.0.0/8", "11.0.0.0/8"], ["172.16.0.0/12"],
    ["100.64.0.0/10", "192.168.0.0/16"], ["224.0.0.0/3"], ["203.0.113.7"],
    ["2001:db8::/32"], ["fc00::/7"], ["fe80::/10"], ["2400::/12"], [], ["not a cidr"],
])
def test_not_world_open(cidrs):
    assert world_open(cidrs) is None


def test_threshold_is_configurable():
    assert world_open(["47.0.0.0/8"]) is None
    assert world_open(["47.0.0.0/8"], widest_prefix=9) == (
        "covers 0.453% of public IPv4 space, more than a /9")
    assert world_open(["47.0.0.0/24"], widest_prefix=0) is None
    assert world_open(["0.0.0.0/1", "128.0.0.0/1"], widest_prefix=0) == (
        "covers all public IPv4 space")


def test_public_space_excludes_special_blocks_and_counts_once():
    assert PUBLIC_TOTAL[4] == 2**32 - sum(IPv4Network(n).num_addresses for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4"))
    [found] = exposure(["8.8.8.0/24", "8.8.8.0/25", "8.8.8.8"])
    assert (found.version, found.public) == (4, 256)
    assert parse_cidr("::1") is not None and parse_cidr(7) is None
