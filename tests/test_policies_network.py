"""Network rules: world-open ingress and NAS access judged by address space (alone and
together on one group and port), public listeners, TLS on internet-facing listeners."""

from __future__ import annotations

import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Resource

from .rule_helpers import sg_rule, stack_messages


def rule_on(group: str, name: str, **props) -> Resource:
    """An ingress rule of security group `group` (by id)."""
    return Resource(t.SECURITY_GROUP_RULE, {"type": "ingress", "ipProtocol": "tcp",
                                            "securityGroupId": group, **props}, name)


@pytest.mark.parametrize("props, expected", [
    ({"cidrIp": "0.0.0.0/0", "portRange": "22/22"},
     "ingress to port 22 (tcp) from 0.0.0.0/0, which covers all public IPv4 space; allow "
     "known CIDRs only"),
    ({"cidrIp": "0.0.0.0/1", "portRange": "22/22"},
     "ingress to port 22 (tcp) from 0.0.0.0/1, which covers 56.5% of public IPv4 space, more "
     "than a /8; allow known CIDRs only"),
    ({"cidrIp": "0.0.0.0/4", "portRange": "3389/3389"}, "covers 6.34% of public IPv4 space"),
    ({"ipv6CidrIp": "::/0", "portRange": "443/443"}, "to port 443 (tcp) from ::/0, which"),
    ({"ipv6CidrIp": "::/1", "portRange": "22/22"}, "covers all public IPv6 space"),
    ({"ipv6CidrIp": "2000::/3", "portRange": "22/22"}, "covers all public IPv6 space"),
    ({"cidrIp": "0.0.0.0/0", "portRange": "-1/-1", "ipProtocol": "all"},
     "to all ports (all) from 0.0.0.0/0"),
    ({"cidrIp": "0.0.0.0/0", "portRange": "1/65535"}, "to all ports (tcp)"),
    ({"cidrIp": "0.0.0.0/0", "portRange": "8000/8100"}, "to ports 8000-8100 (tcp)"),
])
def test_world_ingress_fires(props, expected):
    found = stack_messages("no-world-ingress", [sg_rule(**props)])
    assert len(found) == 1 and expected in found[0][1]


@pytest.mark.parametrize("props", [
    {"cidrIp": "10.0.0.0/8", "portRange": "22/22"},
    {"cidrIp": "47.0.0.0/8", "portRange": "22/22"},
    {"ipv6CidrIp": "2001:db8::/32", "portRange": "22/22"},
    {"cidrIp": "0.0.0.0/0", "portRange": "22/22", "policy": "drop"},
    {"cidrIp": "0.0.0.0/0", "portRange": "22/22", "type": "egress"},
    {"cidrIp": UNKNOWN, "portRange": "22/22"},
    {"sourceSecurityGroupId": UNKNOWN, "portRange": "-1/-1"},
])
def test_world_ingress_quiet(props):
    assert stack_messages("no-world-ingress", [sg_rule(**props)]) == []


def test_halves_on_one_group_and_port_add_up_to_the_world():
    low = rule_on("sg-1", "low", cidrIp="0.0.0.0/2", portRange="22/22")
    lower = rule_on("sg-1", "lower", cidrIp="64.0.0.0/2", portRange="22/22")
    high = rule_on("sg-1", "high", cidrIp="128.0.0.0/1", portRange="20/30")
    assert stack_messages("no-world-ingress", [low, lower, high], widestPublicPrefix=0) == [
        ("low", "ingress to port 22 (tcp) from 0.0.0.0/2, 64.0.0.0/2, 128.0.0.0/1 (rules low, "
                "lower, high), which covers all public IPv4 space; allow known CIDRs only")]
    # alone, each is wider than a /8
    assert sorted(name for name, _ in stack_messages("no-world-ingress", [low, lower, high])) \
        == ["high", "low", "lower"]
    # one half each on different groups, ports or protocols: no union
    for other in (rule_on("sg-2", "h", cidrIp="128.0.0.0/1", portRange="22/22"),
                  rule_on("sg-1", "h", cidrIp="128.0.0.0/1", portRange="23/23"),
                  rule_on("sg-1", "h", cidrIp="128.0.0.0/1", portRange="22/22",
                          ipProtocol="udp")):
        halves = [rule_on("sg-1", "l", cidrIp="0.0.0.0/1", portRange="22/22"), other]
        assert stack_messages("no-world-ingress", halves, widestPublicPrefix=0) == []
    narrow = [rule_on("sg-1", f"r{i}", cidrIp=f"{i}.0.0.0/8", portRange="22/22")
              for i in range(1, 3)]
    assert stack_messages("no-world-ingress", narrow, widestPublicPrefix=7) == []
    assert len(stack_messages("no-world-ingress", narrow)) == 1


def test_protocol_all_joins_every_protocol():
    tcp = rule_on("sg-1", "tcp", cidrIp="0.0.0.0/1", portRange="22/22")
    every = rule_on("sg-1", "all", cidrIp="128.0.0.0/1", portRange="-1/-1", ipProtocol="all")
    found = stack_messages("no-world-ingress", [tcp, every], widestPublicPrefix=0)
    assert found == [("tcp", "ingress to port 22 (tcp) from 0.0.0.0/1, 128.0.0.0/1 (rules "
                             "tcp, all), which covers all public IPv4 space; allow known "
                             "CIDRs only")]


def test_rules_of_one_group_in_preview_are_joined_by_dependency():
    group = Resource(t.SECURITY_GROUP, {}, "sg", urn="urn:sg")
    halves = [Resource(t.SECURITY_GROUP_RULE, {
        "type": "ingress", "ipProtocol": "tcp", "portRange": "22/22", "cidrIp": cidr,
        "securityGroupId": UNKNOWN}, f"r{i}", dependencies=("urn:sg",))
        for i, cidr in enumerate(["0.0.0.0/1", "128.0.0.0/1"])]
    found = stack_messages("no-world-ingress", [group, *halves], widestPublicPrefix=0)
    assert [name for name, _ in found] == ["r0"]
    assert stack_messages("no-world-ingress", halves, widestPublicPrefix=0) == []


@pytest.mark.parametrize("token, key", [(t.ALB_LISTENER, "listenerPort"),
                                        (t.NLB_LISTENER, "listenerPort"),
                                        (t.SLB_LISTENER, "frontendPort")])
def test_listener_ports(token, key):
    assert stack_messages("no-world-ingress", [Resource(token, {key: 443})]) == []
    assert stack_messages("no-world-ingress", [Resource(token, {key: UNKNOWN})]) == []
    assert stack_messages("no-world-ingress", [Resource(token, {key: 8000}, "l")]) == [
        ("l", "load balancer listener on port 8000 is reachable from anywhere; public ports "
              "allowed: [80, 443] (or add a whitelist ACL)")]
    assert stack_messages("no-world-ingress", [Resource(token, {key: 8000})],
                          publicListenerPorts=[8000.0]) == []


@pytest.mark.parametrize("address", ["Intranet", "intranet"])
def test_listener_of_intranet_load_balancer_is_not_public(address):
    balancer = Resource(t.LOAD_BALANCERS[1], {"addressType": address}, "lb", urn="urn:lb")
    listener = Resource(t.NLB_LISTENER, {"listenerPort": 8000}, "l",
                        dependencies=("urn:lb",))
    assert stack_messages("no-world-ingress", [balancer, listener]) == []
    internet = Resource(t.LOAD_BALANCERS[1], {"addressType": "Internet"}, "lb", urn="urn:lb")
    assert [m for _, m in stack_messages("no-world-ingress", [internet, listener])] == [
        "load balancer listener on port 8000 is reachable from anywhere; public ports "
        "allowed: [80, 443] (or add a whitelist ACL)"]


def test_world_open_public_port_allowed_only_on_a_load_balancer_group():
    group = Resource(t.SECURITY_GROUP, {}, "lb-sg", urn="urn:sg", id="sg-1")
    balancer = Resource(t.LOAD_BALANCERS[1], {"securityGroupIds": ["sg-1"],
                                              "addressType": "Internet"}, "lb")
    https = sg_rule(cidrIp="0.0.0.0/0", portRange="443/443", securityGroupId="sg-1")
    ssh = sg_rule(cidrIp="0.0.0.0/0", portRange="22/22", securityGroupId="sg-1")
    assert stack_messages("no-world-ingress", [group, balancer, https]) == []
    assert len(stack_messages("no-world-ingress", [group, balancer, ssh])) == 1
    assert len(stack_messages("no-world-ingress", [group, https])) == 1




def nas_rule(name: str, group: str = "g1", **props) -> Resource:
    return Resource(t.NAS_ACCESS_RULE, {"accessGroupName": group, **props}, name)


@pytest.mark.parametrize("props, expected", [
    ({"sourceCidrIp": "0.0.0.0/0"}, "NAS access rule allows RDWR/no_squash from 0.0.0.0/0, "
                                     "which covers all public IPv4 space; list the VPC's CIDRs"),
    ({"sourceCidrIp": "0.0.0.0/1", "rwAccessType": "RDONLY", "userAccessType": "root_squash"},
     "allows RDONLY/root_squash from 0.0.0.0/1, which covers 56.5%"),
    ({"ipv6SourceCidrIp": "2000::/3"}, "covers all public IPv6 space"),
])
def test_nas_world_access_fires(props, expected):
    found = stack_messages("nas-no-world-access", [nas_rule("r", **props)])
    assert len(found) == 1 and expected in found[0][1]


def test_nas_halves_in_one_access_group():
    halves = [nas_rule("a", sourceCidrIp="0.0.0.0/1"), nas_rule("b", sourceCidrIp="128.0.0.0/1")]
    assert stack_messages("nas-no-world-access", halves, widestPublicPrefix=0) == [
        ("a", "NAS access rules a, b allow RDWR/no_squash from 0.0.0.0/1, 128.0.0.0/1, which "
              "covers all public IPv4 space; list the VPC's CIDRs")]
    apart = [nas_rule("a", sourceCidrIp="0.0.0.0/1"),
             nas_rule("b", "g2", sourceCidrIp="128.0.0.0/1")]
    assert stack_messages("nas-no-world-access", apart, widestPublicPrefix=0) == []


@pytest.mark.parametrize("props", [{"sourceCidrIp": "10.0.0.0/16"}, {"sourceCidrIp": UNKNOWN},
                                   {}, {"ipv6SourceCidrIp": "fd00::/8"}])
def test_nas_world_access_quiet(props):
    assert stack_messages("nas-no-world-access", [nas_rule("r", **props)]) == []


@pytest.mark.parametrize("token, props, expected", [
    (t.ALB_LISTENER, {"listenerPort": 80, "listenerProtocol": "HTTP"}, "speaks HTTP"),
    (t.ALB_LISTENER, {"listenerPort": 80}, "speaks HTTP"),
    (t.NLB_LISTENER, {"listenerPort": 443, "listenerProtocol": "TCP"}, "speaks TCP"),
    (t.SLB_LISTENER, {"frontendPort": 80, "protocol": "http"}, "speaks http"),
])
def test_tls_on_public_listeners_fires(token, props, expected):
    found = stack_messages("tls-on-public-listeners", [Resource(token, props, "l")])
    assert len(found) == 1 and expected in found[0][1]
    assert "without TLS" in found[0][1]


def test_tls_on_public_listeners_quiet():
    internet = Resource(t.LOAD_BALANCERS[0], {"addressType": "Internet"}, "lb", urn="urn:lb")
    intranet = Resource(t.LOAD_BALANCERS[0], {"addressType": "Intranet"}, "lb", urn="urn:lb")
    http = Resource(t.ALB_LISTENER, {"listenerPort": 80, "listenerProtocol": "HTTP"}, "l",
                    dependencies=("urn:lb",))
    assert len(stack_messages("tls-on-public-listeners", [internet, http])) == 1
    assert stack_messages("tls-on-public-listeners", [intranet, http]) == []
    assert stack_messages("tls-on-public-listeners", [internet, http],
                          plainListenerPorts=[80]) == []
    for listener in (
            Resource(t.ALB_LISTENER, {"listenerPort": 443, "listenerProtocol": "HTTPS"}),
            Resource(t.NLB_LISTENER, {"listenerPort": 443, "listenerProtocol": "TCPSSL"}),
            Resource(t.SLB_LISTENER, {"frontendPort": 443, "protocol": "https"}),
            Resource(t.ALB_LISTENER, {"listenerPort": 443, "listenerProtocol": UNKNOWN})):
        assert stack_messages("tls-on-public-listeners", [listener]) == []
