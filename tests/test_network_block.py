"""The Network block on its own, under the mock engine."""

from ipaddress import IPv4Network

from components.conventions import Conventions
from components.network import Network


def test_vpc_and_one_vswitch_per_zone(record):
    resources = record(lambda: Network(
        "n1", vpc_cidr=IPv4Network("10.1.0.0/16"),
        vswitch_cidrs={"cn-hangzhou-i": IPv4Network("10.1.64.0/21"),
                       "cn-hangzhou-j": IPv4Network("10.1.72.0/21")},
        conventions=Conventions(tags={"Project": "p"})))
    vpcs = [r for r in resources if r.type == "alicloud:vpc/network:Network"]
    vswitches = {r.inputs["zoneId"]: r for r in resources if r.type == "alicloud:vpc/switch:Switch"}
    assert [v.inputs["cidrBlock"] for v in vpcs] == ["10.1.0.0/16"]
    assert {z: v.inputs["cidrBlock"] for z, v in vswitches.items()} == {
        "cn-hangzhou-i": "10.1.64.0/21", "cn-hangzhou-j": "10.1.72.0/21"}
    assert all(v.name.startswith("n1-") and v.inputs["tags"]["Project"] == "p"
               for v in [*vpcs, *vswitches.values()])
