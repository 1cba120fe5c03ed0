"""Network exposure by every path and spelling: security group port spellings and prefix
lists, whitelists of every database type, LB ACLs (white and black), admin ports behind a
listener, DNAT, Kubernetes Services, other-account peers and broad private ranges."""

from __future__ import annotations

import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Resource
from gpu_infra_policies.exposure import ADMIN_PORTS, WHITELISTS

from .rule_helpers import messages, sg_rule, stack_messages

WORLD = "no-world-ingress"


@pytest.mark.parametrize("port, shown", [
    (22, "port 22"), (22.0, "port 22"), ("22", "port 22"), (" 22/22 ", "port 22"),
    (-1, "all ports"), ("-1/-1", "all ports"), (None, "all ports"), ("1/65535", "all ports"),
])
def test_every_port_spelling_is_judged(port, shown):
    found = stack_messages(WORLD, [sg_rule(cidrIp="0.0.0.0/0", portRange=port)])
    assert len(found) == 1 and f"ingress to {shown} (tcp) from 0.0.0.0/0" in found[0][1]


@pytest.mark.parametrize("port", [UNKNOWN, "ssh", True, "70000/70001", 22.5])
def test_ports_that_are_not_ports_are_skipped(port):
    assert stack_messages(WORLD, [sg_rule(cidrIp="0.0.0.0/0", portRange=port)]) == []


def test_integer_port_on_a_load_balancer_group_is_still_exempt():
    group = Resource(t.SECURITY_GROUP, {}, "lb-sg", "urn:lb-sg", id="sg-lb")
    balancer = Resource(t.NLB_LOAD_BALANCER, {"securityGroupIds": ["sg-lb"]}, "nlb", "urn:nlb")
    rule = sg_rule(cidrIp="0.0.0.0/0", portRange=443, securityGroupId="sg-lb")
    assert stack_messages(WORLD, [group, balancer, rule]) == []


def test_prefix_list_sources_are_the_lists_entries():
    world = Resource(t.PREFIX_LIST, {"entries": [{"cidr": "0.0.0.0/1"}, {"cidr": "128.0.0.0/1"}]},
                     "pl", "urn:pl", id="pl-1")
    rule = sg_rule(prefixListId="pl-1", portRange="22/22")
    found = stack_messages(WORLD, [world, rule])
    assert [name for name, _ in found] == ["rule"]
    assert "from 0.0.0.0/1, 128.0.0.0/1" in found[0][1]
    office = Resource(t.PREFIX_LIST, {"entries": [{"cidr": "203.0.113.0/24"}]}, "pl", "urn:pl",
                      id="pl-1")
    assert stack_messages(WORLD, [office, rule]) == []
    assert stack_messages(WORLD, [rule]) == []  # a list outside the stack: not known


def whitelist_cases():
    for token, keys in WHITELISTS.items():
        for key in keys:
            yield token, key


@pytest.mark.parametrize("token, key", list(whitelist_cases()))
@pytest.mark.parametrize("value", [["0.0.0.0/0"], ["10.1.0.0/16", "0.0.0.0"], "127.0.0.1,0.0.0.0/0",
                                   ["0.0.0.0/1", "128.0.0.0/1"], ["::/0"]])
def test_world_whitelists_fire_on_every_type(token, key, value):
    found = stack_messages(WORLD, [Resource(token, {key: value}, "db")])
    assert len(found) == 1 and found[0][1].startswith(f"{key} admits ")


@pytest.mark.parametrize("token, key", list(whitelist_cases()))
@pytest.mark.parametrize("value", [["10.1.0.0/16"], "127.0.0.1", ["47.100.1.2/32"], [UNKNOWN],
                                   UNKNOWN, []])
def test_narrow_whitelists_are_quiet(token, key, value):
    assert stack_messages(WORLD, [Resource(token, {key: value}, "db")]) == []


def test_polardb_ip_arrays_are_read():
    cluster = Resource(t.POLARDB_CLUSTER, {"dbClusterIpArrays": [
        {"dbClusterIpArrayName": "default", "securityIps": ["10.0.0.0/16"]},
        {"dbClusterIpArrayName": "tracker", "securityIps": ["0.0.0.0/0"]}]}, "pg")
    assert [m for _, m in stack_messages(WORLD, [cluster])] == [
        "dbClusterIpArrays[1].securityIps admits 0.0.0.0/0, which covers all public IPv4 "
        "space; list the VPC's or the clients' CIDRs"]


@pytest.mark.parametrize("acl_type, entry_type, list_key", [
    (t.SLB_ACL, t.SLB_ACL_ENTRY, "entryLists"), (t.ALB_ACL, t.ALB_ACL_ENTRY, "aclEntries")])
def test_acls_admitting_the_world(acl_type, entry_type, list_key):
    inline = Resource(acl_type, {list_key: [{"entry": "0.0.0.0/0"}]}, "acl", "urn:acl",
                      id="acl-1")
    assert [n for n, _ in stack_messages(WORLD, [inline])] == ["acl"]
    acl = Resource(acl_type, {}, "acl", "urn:acl", id="acl-1")
    halves = [Resource(entry_type, {"aclId": "acl-1", "entry": cidr}, f"e{i}")
              for i, cidr in enumerate(["0.0.0.0/1", "128.0.0.0/1"])]
    assert [n for n, _ in stack_messages(WORLD, [acl, *halves])] == ["acl"]
    narrow = Resource(entry_type, {"aclId": "acl-1", "entry": "203.0.113.0/24"}, "e")
    assert stack_messages(WORLD, [acl, narrow]) == []


def test_a_blacklist_acl_with_the_world_restricts():
    acl = Resource(t.SLB_ACL, {"entryLists": [{"entry": "0.0.0.0/0"}]}, "deny", "urn:deny",
                   id="acl-1")
    listener = Resource(t.SLB_LISTENER, {"frontendPort": 443, "protocol": "https",
                                         "aclStatus": "on", "aclType": "black", "aclId": "acl-1",
                                         "tlsCipherPolicy": "tls_cipher_policy_1_2"}, "l")
    assert stack_messages(WORLD, [acl, listener]) == []


@pytest.mark.parametrize("listener_props, acl_type, list_key", [
    ({"frontendPort": 22, "aclStatus": "on", "aclType": "white", "aclId": "acl-1"},
     t.SLB_ACL, "entryLists"),
    ({"listenerPort": 22, "aclConfig": {"aclType": "White", "aclRelations": [{"aclId": "acl-1"}]}},
     t.ALB_ACL, "aclEntries")])
def test_a_whitelist_acl_lets_an_admin_listener_be(listener_props, acl_type, list_key):
    token = t.SLB_LISTENER if acl_type == t.SLB_ACL else t.ALB_LISTENER
    listener = Resource(token, listener_props, "ssh")
    office = Resource(acl_type, {list_key: [{"entry": "203.0.113.0/24"}]}, "office", "urn:o",
                      id="acl-1")
    assert stack_messages(WORLD, [office, listener]) == []
    world = Resource(acl_type, {list_key: [{"entry": "0.0.0.0/0"}]}, "office", "urn:o",
                     id="acl-1")
    assert sorted(n for n, _ in stack_messages(WORLD, [world, listener])) == ["office", "ssh"]
    assert [n for n, _ in stack_messages(WORLD, [listener])] == ["ssh"]  # ACL not in stack


@pytest.mark.parametrize("port", sorted(ADMIN_PORTS))
def test_admin_ports_behind_a_public_listener(port):
    slb = Resource(t.SLB_LISTENER, {"frontendPort": 443, "backendPort": port}, "slb")
    group = Resource(t.ALB_SERVER_GROUP, {"servers": [{"port": port}]}, "g", "urn:g", id="sg-1")
    alb = Resource(t.ALB_LISTENER, {"listenerPort": 443, "defaultActions": [
        {"type": "ForwardGroup",
         "forwardGroupConfig": {"serverGroupTuples": [{"serverGroupId": "sg-1"}]}}]}, "alb")
    nlb_group = Resource(t.NLB_SERVER_GROUP, {}, "ng", "urn:ng", id="nsg-1")
    attach = Resource(t.NLB_SERVER_ATTACHMENT, {"serverGroupId": "nsg-1", "port": port}, "a")
    nlb = Resource(t.NLB_LISTENER, {"listenerPort": 443, "serverGroupId": "nsg-1"}, "nlb")
    found = stack_messages(WORLD, [slb, group, alb, nlb_group, attach, nlb])
    assert sorted(n for n, _ in found) == ["alb", "nlb", "slb"]
    assert all(f"forwards to {port} ({ADMIN_PORTS[port]})" in m for _, m in found)


def test_inference_backend_port_is_not_an_admin_port():
    assert stack_messages(WORLD, [Resource(t.SLB_LISTENER, {"frontendPort": 443,
                                                            "backendPort": 8000}, "l")]) == []


def test_nlb_port_range_listener():
    listener = Resource(t.NLB_LISTENER, {"listenerPort": 0, "startPort": 1, "endPort": 65535}, "l")
    assert [m for _, m in stack_messages(WORLD, [listener])][0].startswith(
        "load balancer listener on ports 1-65535 is reachable from anywhere")


@pytest.mark.parametrize("external, fires", [("any", True), ("22", True), (22, True),
                                             ("443", False), (UNKNOWN, False)])
def test_dnat_entries(external, fires):
    entry = Resource(t.FORWARD_ENTRY, {"externalPort": external, "internalIp": "10.0.0.5",
                                       "internalPort": "22"}, "dnat")
    assert bool(stack_messages(WORLD, [entry])) is fires


def service(annotations=None, **spec):
    return Resource(t.K8S_SERVICE, {"metadata": {"name": "s", "annotations": annotations or {}},
                                    "spec": {"type": "LoadBalancer", **spec}}, "svc")


@pytest.mark.parametrize("resource, fires", [
    (service(ports=[{"port": 8265}]), True),
    (service(ports=[{"port": 443}]), False),
    (service(ports=[{"port": 8265}], loadBalancerSourceRanges=["0.0.0.0/0"]), True),
    (service(ports=[{"port": 8265}], loadBalancerSourceRanges=["203.0.113.0/24"]), False),
    (service({"service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type": "intranet"},
             ports=[{"port": 8265}]), False),
    (service({"service.beta.kubernetes.io/alibaba-cloud-loadbalancer-acl-status": "on",
              "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-acl-type": "white"},
             ports=[{"port": 8265}]), False),
    (Resource(t.K8S_SERVICE, {"spec": {"type": "ClusterIP", "ports": [{"port": 8265}]}}), False),
])
def test_kubernetes_load_balancer_services(resource, fires):
    assert bool(stack_messages(WORLD, [resource])) is fires


@pytest.mark.parametrize("token, props", [
    (t.SECURITY_GROUP_RULE, {"type": "ingress", "sourceGroupOwnerAccount": "1234567890"}),
    (t.SECURITY_GROUP_RULE, {"type": "ingress", "sourceGroupOwnerId": "1234567890"}),
    (t.PEER_CONNECTION, {"acceptingAliUid": 1234567890}),
    (t.CEN_INSTANCE_GRANT, {"cenOwnerId": "1234567890", "cenId": "cen-1"}),
    (t.CEN_INSTANCE_ATTACHMENT, {"childInstanceOwnerId": "1234567890"}),
])
def test_foreign_peers(token, props):
    resource = Resource(token, props)
    assert messages("no-foreign-network-peers", resource) and "1234567890" in messages(
        "no-foreign-network-peers", resource)[0]
    assert messages("no-foreign-network-peers", resource, trustedAccounts=["1234567890"]) == []
    unknown = Resource(token, {key: UNKNOWN for key in props})
    assert messages("no-foreign-network-peers", unknown) == []


@pytest.mark.parametrize("resource, fires", [
    (sg_rule(cidrIp="10.0.0.0/8", portRange="22/22"), True),
    (sg_rule(cidrIp="172.16.0.0/12", portRange="8000/8000"), True),
    (sg_rule(cidrIp="10.20.0.0/16", portRange="22/22"), False),
    (sg_rule(cidrIp="0.0.0.0/0", portRange="22/22"), False),  # the world rule reports it
    (Resource(t.NAS_ACCESS_RULE, {"sourceCidrIp": "10.0.0.0/8"}), True),
    (Resource(t.RDS_INSTANCE, {"securityIps": ["192.168.0.0/16", "10.0.0.0/16"]}), True),
    (Resource(t.RDS_INSTANCE, {"securityIps": ["10.1.2.0/24"]}), False),
])
def test_broad_private_ranges(resource, fires):
    assert bool(stack_messages("no-broad-private-ingress", [resource])) is fires
    assert stack_messages("no-broad-private-ingress", [resource], widestPrivatePrefix=4) == []
