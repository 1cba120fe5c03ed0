"""Network building block: a VPC and one vSwitch per zone, with a deterministic layout."""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Network

import pulumi
import pulumi_alicloud as alicloud

from .conventions import Conventions, child_name


class Network(pulumi.ComponentResource):
    """A VPC and one vSwitch per zone.

    Outputs: `vpc_id`, `vpc_cidr`, `vswitch_ids` (zone -> id), `vswitch_cidrs` (zone -> CIDR).
    """

    vpc: alicloud.vpc.Network
    vswitches: dict[str, alicloud.vpc.Switch]

    def __init__(self, name: str, *, vpc_cidr: IPv4Network,
                 vswitch_cidrs: Mapping[str, IPv4Network], conventions: Conventions,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-infra:network:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.vpc = alicloud.vpc.Network(
            child_name(name, "vpc"), vpc_name=child_name(name, "vpc"),
            cidr_block=str(vpc_cidr), tags=conventions.tags_for(child_name(name, "vpc")),
            opts=child)
        self.vswitches = {
            zone: alicloud.vpc.Switch(
                child_name(name, f"vsw-{zone}"), vswitch_name=child_name(name, f"vsw-{zone}"),
                vpc_id=self.vpc.id, zone_id=zone, cidr_block=str(cidr),
                tags=conventions.tags_for(child_name(name, f"vsw-{zone}")), opts=child)
            for zone, cidr in vswitch_cidrs.items()
        }
        self.vpc_id: pulumi.Output[str] = self.vpc.id
        self.vpc_cidr = str(vpc_cidr)
        self.vswitch_ids = {zone: vsw.id for zone, vsw in self.vswitches.items()}
        self.vswitch_cidrs = {zone: str(cidr) for zone, cidr in vswitch_cidrs.items()}
        self.register_outputs({"vpc_id": self.vpc_id, "vpc_cidr": self.vpc_cidr,
                               "vswitch_ids": self.vswitch_ids,
                               "vswitch_cidrs": self.vswitch_cidrs})
