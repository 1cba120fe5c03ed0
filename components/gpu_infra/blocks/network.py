"""Network building block: a VPC and one vSwitch per zone with a deterministic layout,
optional NAT egress so nodes without public IPs reach the internet, and an optional flow log
of the VPC's traffic."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any, NamedTuple

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.blocks.logs import LogTarget
from gpu_infra.schema.network import NetworkConfig

NAT_TYPE = "Enhanced"
"""The only NAT gateway type the provider still creates (`Normal` is gone since 1.137.0)."""
NAT_PAYMENT_TYPE = "PayAsYouGo"
"""The only billing method vpc.NatGateway accepts."""
NAT_NETWORK_TYPE = "internet"
"""An internet NAT gateway (`intranet` would be a VPC NAT gateway)."""
NAT_INTERNET_CHARGE_TYPE = "PayByLcu"
"""How an enhanced NAT gateway is metered (PayBySpec is gone since 1.137.0)."""
EIP_PAYMENT_TYPE = "PayAsYouGo"
EIP_INTERNET_CHARGE_TYPE = "PayByTraffic"
"""Pay-as-you-go EIP metered by traffic: bandwidth 1-200 Mbit/s."""
EIP_ASSOCIATION_TARGET = "Nat"
"""ecs.EipAssociation instance_type for a NAT gateway."""


class ExistingVswitch(NamedTuple):
    """What a lookup says of a bring-your-own vSwitch."""

    vpc_id: str
    zone_id: str
    cidr_block: str


class ExistingNetworkError(pulumi.RunError):
    """The VPC or vSwitches the `network` section brings are not what it says they are
    (`problems`: one line each, field path first). A RunError: no traceback."""

    def __init__(self, problems: list[str]):
        super().__init__("the existing network differs from the config:\n"
                         + "\n".join(problems))
        self.problems = problems


def existing_network_problems(config: NetworkConfig, vpc_blocks: list[str] | None,
                              vswitches: dict[str, ExistingVswitch]) -> list[str]:
    """What the cloud's answer contradicts in a bring-your-own `network`: `vpc_blocks` are
    the VPC's CIDR blocks, primary first (None: no such VPC), `vswitches` the vSwitches
    found, by id. `vpc_cidr` must lie within one of the VPC's blocks (the rules it scopes
    then admit no address outside the VPC) and hold every vSwitch of the stack, each of
    which must be in that VPC and in the zone it is listed for."""
    vpc_id = config.existing_vpc_id
    if vpc_blocks is None:
        return [f"network.existing_vpc_id: {vpc_id} not found (the lookup in the stack's "
                "region found no such VPC)"]
    problems: list[str] = []
    blocks = [IPv4Network(block) for block in vpc_blocks if block]
    if not any(config.vpc_cidr.subnet_of(block) for block in blocks):
        problems.append(f"network.vpc_cidr: {config.vpc_cidr} is not within {vpc_id}'s "
                        f"CIDR blocks ({', '.join(map(str, blocks))}); state the VPC's "
                        "CIDR block, or the part of it the stack's vSwitches are in")
    for zone in config.zones:
        vsw_id = config.existing_vswitch_ids[zone]
        path = f"network.existing_vswitch_ids.{zone}"
        found = vswitches.get(vsw_id)
        if found is None:
            problems.append(f"{path}: {vsw_id} not found (the lookup found no such vSwitch)")
        elif found.vpc_id != vpc_id:
            problems.append(f"{path}: {vsw_id} is in {found.vpc_id}, not in {vpc_id}")
        elif found.zone_id != zone:
            problems.append(f"{path}: {vsw_id} is in zone {found.zone_id}, not {zone}")
        elif not IPv4Network(found.cidr_block).subnet_of(config.vpc_cidr):
            problems.append(f"{path}: {vsw_id} ({found.cidr_block}) is outside vpc_cidr "
                            f"{config.vpc_cidr}; state a vpc_cidr that holds it")
    return problems


class Network(pulumi.ComponentResource):
    """A VPC and one vSwitch per zone of `config`, or the existing ones it names
    (bring-your-own), plus a NAT gateway, an EIP and one SNAT entry per vSwitch when
    `config.creates_nat` (by default only for a VPC it creates).

    With `config.pod_vswitches` (ACK's Terway) each zone also gets a pod vSwitch
    (`<name>-vsw-pods-<zone>`, its own SNAT entry).

    Attributes: `vpc_id`, `vpc_cidr`, `vswitch_ids` (zone -> id), `vswitch_cidrs`
    (zone -> CIDR), `pod_vswitch_ids` (zone -> id; empty without pods), `nat_gateway_id`
    and `nat_eip` (the EIP's address), both None without NAT;
    the raw children `vpc`, `vswitches` (empty in bring-your-own mode), `nat_gateway`, `eip`,
    `eip_association`, `snat_entries` (zone -> entry).
    """

    TYPE = "gpu-infra:network:Network"
    vpc_id: pulumi.Input[str]
    vswitch_ids: dict[str, pulumi.Input[str]]
    vswitch_cidrs: dict[str, pulumi.Input[str]]

    def __init__(self, name: str, *, config: NetworkConfig, conventions: Conventions,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        self._name_prefix = name
        self._conventions = conventions
        self.vpc: alicloud.vpc.Network | None = None
        self.vswitches: dict[str, alicloud.vpc.Switch] = {}
        self.pod_vswitch_ids: dict[str, pulumi.Input[str]] = {}
        if config.existing_vpc_id:
            self._use_existing(config, config.existing_vpc_id)
        else:
            self._create_vpc(config)
        self.vpc_cidr = str(config.vpc_cidr)
        self.nat_gateway: alicloud.vpc.NatGateway | None = None
        self.eip: alicloud.ecs.EipAddress | None = None
        self.eip_association: alicloud.ecs.EipAssociation | None = None
        self.snat_entries: dict[str, alicloud.vpc.SnatEntry] = {}
        self.nat_gateway_id: pulumi.Output[str] | None = None
        self.nat_eip: pulumi.Output[str] | None = None
        if config.creates_nat:
            self._create_nat(config)
        self.register_outputs({
            "vpc_id": self.vpc_id, "vpc_cidr": self.vpc_cidr, "vswitch_ids": self.vswitch_ids,
            "vswitch_cidrs": self.vswitch_cidrs, **(
                {"pod_vswitch_ids": self.pod_vswitch_ids} if self.pod_vswitch_ids else {}),
            "nat_gateway_id": self.nat_gateway_id,
            "nat_eip": self.nat_eip})

    def flow_log(self, target: LogTarget) -> alicloud.vpc.FlowLog:
        """A flow log of the VPC's traffic (all of it, accepted and dropped) into `target`."""
        name, tags = self._child("flow-log")
        return alicloud.vpc.FlowLog(
            name, flow_log_name=name, resource_type="VPC", resource_id=self.vpc_id,
            traffic_type="All", project_name=target.project, log_store_name=target.store,
            tags=tags, opts=pulumi.ResourceOptions(parent=self))

    def _child(self, suffix: str) -> tuple[str, dict[str, str]]:
        """A child's name and its tags."""
        name = child_name(self._name_prefix, suffix)
        return name, self._conventions.tags_for(name)

    def _create_vpc(self, config: NetworkConfig) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        name, tags = self._child("vpc")
        self.vpc = alicloud.vpc.Network(name, vpc_name=name, cidr_block=str(config.vpc_cidr),
                                        tags=tags, opts=opts)
        for zone in config.zones:
            name, tags = self._child(f"vsw-{zone}")
            self.vswitches[zone] = alicloud.vpc.Switch(
                name, vswitch_name=name, vpc_id=self.vpc.id, zone_id=zone,
                cidr_block=str(config.vswitch_cidr(zone)), tags=tags, opts=opts)
        for zone in config.zones if config.pod_vswitches else ():
            name, tags = self._child(f"vsw-pods-{zone}")
            self.pod_vswitch_ids[zone] = alicloud.vpc.Switch(
                name, vswitch_name=name, vpc_id=self.vpc.id, zone_id=zone,
                cidr_block=str(config.pod_vswitch_cidr(zone)), tags=tags, opts=opts).id
        self.vpc_id = self.vpc.id
        self.vswitch_ids = {zone: vsw.id for zone, vsw in self.vswitches.items()}
        self.vswitch_cidrs = {zone: str(config.vswitch_cidr(zone)) for zone in config.zones}

    def _use_existing(self, config: NetworkConfig, vpc_id: str) -> None:
        """The VPC and vSwitches the config names, once the cloud's answer to a lookup of
        both agrees with the config (existing_network_problems): every id is given out
        through that check, so nothing is created in a VPC the config misdescribes."""
        vswitch_ids = {zone: config.existing_vswitch_ids[zone] for zone in config.zones}
        invoke = pulumi.InvokeOutputOptions(parent=self)
        vpcs = alicloud.vpc.get_networks_output(ids=[vpc_id], opts=invoke).vpcs
        vswitches = alicloud.vpc.get_switches_output(ids=list(vswitch_ids.values()),
                                                     opts=invoke).vswitches

        def check(vpc_list: list[Any], vswitch_list: list[Any]) -> dict[str, str]:
            blocks = next(([vpc.cidr_block, *vpc.secondary_cidr_blocks]
                           for vpc in vpc_list if vpc.id == vpc_id), None)
            seen = {vsw.id: ExistingVswitch(vsw.vpc_id, vsw.zone_id, vsw.cidr_block)
                    for vsw in vswitch_list}
            problems = existing_network_problems(config, blocks, seen)
            if problems:
                raise ExistingNetworkError(problems)
            return {zone: seen[vsw_id].cidr_block for zone, vsw_id in vswitch_ids.items()}

        def with_vswitches(vpc_list: list[Any]) -> pulumi.Output[dict[str, str]]:
            return vswitches.apply(lambda vswitch_list: check(vpc_list, vswitch_list))

        # one apply within the other: Output.all would turn the results into plain dicts
        checked: pulumi.Output[dict[str, str]] = vpcs.apply(with_vswitches)

        def given_out(value: str) -> pulumi.Output[str]:
            return checked.apply(lambda _: value)

        def cidr_of(zone: str) -> pulumi.Output[str]:
            return checked.apply(lambda cidrs: cidrs[zone])

        self.vpc_id = given_out(vpc_id)
        self.vswitch_ids = {zone: given_out(vsw_id) for zone, vsw_id in vswitch_ids.items()}
        self.vswitch_cidrs = {zone: cidr_of(zone) for zone in vswitch_ids}

    def _create_nat(self, config: NetworkConfig) -> None:
        opts = pulumi.ResourceOptions(parent=self)
        protect = self._conventions.deletion_protection
        name, tags = self._child("nat")
        self.nat_gateway = alicloud.vpc.NatGateway(
            name, nat_gateway_name=name, vpc_id=self.vpc_id,
            vswitch_id=self.vswitch_ids[config.zones[0]], nat_type=NAT_TYPE,
            network_type=NAT_NETWORK_TYPE, payment_type=NAT_PAYMENT_TYPE,
            internet_charge_type=NAT_INTERNET_CHARGE_TYPE, deletion_protection=protect,
            tags=tags, opts=opts)
        name, tags = self._child("nat-eip")
        self.eip = alicloud.ecs.EipAddress(
            name, address_name=name, bandwidth=str(config.nat_bandwidth_mbps),
            payment_type=EIP_PAYMENT_TYPE, internet_charge_type=EIP_INTERNET_CHARGE_TYPE,
            deletion_protection=protect, tags=tags, opts=opts)
        self.eip_association = alicloud.ecs.EipAssociation(
            child_name(self._name_prefix, "nat-eip-assoc"), allocation_id=self.eip.id,
            instance_id=self.nat_gateway.id, instance_type=EIP_ASSOCIATION_TARGET, opts=opts)
        snat_opts = pulumi.ResourceOptions(parent=self, depends_on=[self.eip_association])
        sources = [*((zone, vsw) for zone, vsw in self.vswitch_ids.items()),
                   *((f"pods-{zone}", vsw) for zone, vsw in self.pod_vswitch_ids.items())]
        for zone, vswitch_id in sources:
            name = child_name(self._name_prefix, f"snat-{zone}")
            self.snat_entries[zone] = alicloud.vpc.SnatEntry(
                name, snat_entry_name=name, snat_table_id=self.nat_gateway.snat_table_ids,
                source_vswitch_id=vswitch_id, snat_ip=self.eip.ip_address, opts=snat_opts)
        self.nat_gateway_id = self.nat_gateway.id
        self.nat_eip = self.eip.ip_address


__all__ = ["ExistingNetworkError", "ExistingVswitch", "Network", "existing_network_problems"]
