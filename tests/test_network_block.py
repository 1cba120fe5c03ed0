"""The Network block on its own, under the mock engine."""

import pulumi
import pytest

from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.network import Network
from gpu_infra.schema.network import NetworkConfig
from gpu_infra_tools.plan.engine import run_under_mocks

from .conftest import BASE_TRAINING, cluster_config, merged

VPC = "alicloud:vpc/network:Network"
VSWITCH = "alicloud:vpc/switch:Switch"
NAT = "alicloud:vpc/natGateway:NatGateway"
EIP = "alicloud:ecs/eipAddress:EipAddress"
EIP_ASSOCIATION = "alicloud:ecs/eipAssociation:EipAssociation"
SNAT = "alicloud:vpc/snatEntry:SnatEntry"
TWO_ZONES = ["cn-hangzhou-i", "cn-hangzhou-j"]
BYO = {"existing_vpc_id": "vpc-byo1", "zones": TWO_ZONES,
       "existing_vswitch_ids": {"cn-hangzhou-i": "vsw-byo1", "cn-hangzhou-j": "vsw-byo2"}}


def of(resources, type_token):
    return [r for r in resources if r.type == type_token]


def build_network(record, conventions=None, **network):
    config = NetworkConfig(**{"vpc_cidr": "10.1.0.0/16", "zones": TWO_ZONES, **network})
    cluster = merged(BASE_TRAINING, network=config.model_dump(mode="json"))
    return record(lambda: Network("n1", config=config,
                                  conventions=conventions or Conventions(tags={"Project": "p"})),
                  cluster=cluster)


def test_vpc_and_one_vswitch_per_zone(record):
    resources = build_network(record, nat_gateway=False)
    vpcs = of(resources, VPC)
    vswitches = {r.inputs["zoneId"]: r for r in of(resources, VSWITCH)}
    assert [v.inputs["cidrBlock"] for v in vpcs] == ["10.1.0.0/16"]
    assert {z: v.inputs["cidrBlock"] for z, v in vswitches.items()} == {
        "cn-hangzhou-i": "10.1.64.0/21", "cn-hangzhou-j": "10.1.72.0/21"}
    assert all(v.name.startswith("n1-") and v.inputs["tags"] == {"Project": "p", "Name": v.name}
               for v in [*vpcs, *vswitches.values()])
    assert all(v.inputs["vpcId"] == vpcs[0].id for v in vswitches.values())
    assert not of(resources, NAT) + of(resources, EIP) + of(resources, SNAT)


def test_adding_a_zone_keeps_existing_vswitch_cidrs(record):
    one = build_network(record, nat_gateway=False, zones=["cn-hangzhou-j"])
    three = build_network(record, nat_gateway=False,
                          zones=["cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j"])
    cidr_of_j = [r.inputs["cidrBlock"] for rs in (one, three) for r in of(rs, VSWITCH)
                 if r.inputs["zoneId"] == "cn-hangzhou-j"]
    assert cidr_of_j == ["10.1.72.0/21", "10.1.72.0/21"]


def test_nat_gateway_in_first_zone_with_provider_values(record):
    resources = build_network(record, nat_bandwidth_mbps=50)
    vswitch_i = next(r for r in of(resources, VSWITCH) if r.inputs["zoneId"] == "cn-hangzhou-i")
    [nat] = of(resources, NAT)
    assert {k: nat.inputs[k] for k in ("natType", "paymentType", "networkType",
                                       "internetChargeType", "vswitchId", "vpcId")} == {
        "natType": "Enhanced", "paymentType": "PayAsYouGo", "networkType": "internet",
        "internetChargeType": "PayByLcu", "vswitchId": vswitch_i.id,
        "vpcId": of(resources, VPC)[0].id}
    [eip] = of(resources, EIP)
    assert (eip.inputs["bandwidth"], eip.inputs["paymentType"],
            eip.inputs["internetChargeType"]) == ("50", "PayAsYouGo", "PayByTraffic")
    [association] = of(resources, EIP_ASSOCIATION)
    assert association.inputs == {"allocationId": eip.id, "instanceId": nat.id,
                                  "instanceType": "Nat"}
    assert nat.inputs["deletionProtection"] is False and eip.inputs["deletionProtection"] is False


def test_every_vswitch_routes_out_through_the_nat_eip(record):
    resources = build_network(record)
    [association] = of(resources, EIP_ASSOCIATION)
    vswitch_ids = {r.id for r in of(resources, VSWITCH)}
    snats = of(resources, SNAT)
    assert {s.inputs["sourceVswitchId"] for s in snats} == vswitch_ids and len(snats) == 2
    assert len({s.inputs["snatIp"] for s in snats}) == 1
    assert {s.inputs["snatTableId"] for s in snats} == {f"stb-{of(resources, NAT)[0].id[-12:]}"}
    assert all(association.urn in s.dependencies for s in snats)


def test_nat_exports_the_eip_address_used_by_snat():
    stack = cluster_config(BASE_TRAINING)

    def build():
        network = Network("n1", config=stack.network, conventions=Conventions())
        pulumi.export("nat_eip", network.nat_eip)
        pulumi.export("nat_gateway_id", network.nat_gateway_id)

    resources, outputs = run_under_mocks(stack, "test", build)
    [snat] = of(resources, SNAT)
    assert outputs["nat_eip"].startswith("47.") and outputs["nat_eip"] == snat.inputs["snatIp"]
    assert outputs["nat_gateway_id"] == of(resources, NAT)[0].id


def test_prod_protects_nat_and_eip(record):
    resources = build_network(record, conventions=Conventions(deletion_protection=True))
    assert [r.inputs["deletionProtection"] for r in of(resources, NAT) + of(resources, EIP)] == [
        True, True]


def test_bring_your_own_vpc_creates_no_vpc_or_vswitch_but_nat_uses_given_ids():
    stack = cluster_config(merged(BASE_TRAINING, network={**BYO, "nat_gateway": True}))

    def build():
        network = Network("n1", config=stack.network, conventions=Conventions())
        pulumi.export("vpc_id", network.vpc_id)
        pulumi.export("vswitch_ids", network.vswitch_ids)
        pulumi.export("vswitch_cidrs", network.vswitch_cidrs)

    resources, outputs = run_under_mocks(stack, "test", build)
    assert not of(resources, VPC) and not of(resources, VSWITCH)
    [nat] = of(resources, NAT)
    assert (nat.inputs["vpcId"], nat.inputs["vswitchId"]) == ("vpc-byo1", "vsw-byo1")
    assert {s.inputs["sourceVswitchId"] for s in of(resources, SNAT)} == {"vsw-byo1", "vsw-byo2"}
    assert outputs == {"vpc_id": "vpc-byo1", "vswitch_ids": BYO["existing_vswitch_ids"],
                       "vswitch_cidrs": {"cn-hangzhou-i": "10.1.64.0/21",
                                         "cn-hangzhou-j": "10.1.72.0/21"}}



@pytest.mark.parametrize("nat", [False, None])
def test_bring_your_own_creates_no_nat_unless_asked(record, nat):
    network = {**BYO, "nat_gateway": nat} if nat is not None else BYO
    cluster = merged(BASE_TRAINING, network=network)
    resources = record(lambda: Network("n1", config=cluster_config(cluster).network,
                                       conventions=Conventions()), cluster=cluster)
    assert [r.type for r in resources] == ["gpu-infra:network:Network"]
