"""The `network` section: VPC, vSwitches per zone, NAT egress, bring-your-own ids."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated

from pydantic import Field, model_validator

from gpu_infra.schema.base import Cidr, StrictModel
from gpu_infra_facts.allowed import EIP_MAX_TRAFFIC_MBPS, VPC_PREFIX_BITS, VSWITCH_PREFIX_BITS
from gpu_infra_facts.regions import zone_letter
from gpu_infra_facts.vpc import PRIVATE_RANGES, reserved_overlap

ZONE_SLOTS_BITS = 5
"""Default vSwitch prefix is the VPC prefix + 5: 32 slots, one per zone letter a..z."""


class NetworkConfig(StrictModel):
    """VPC layout. vSwitch CIDRs are derived from each zone's letter, so adding a zone
    never renumbers the vSwitches that exist. With `pod_vswitches` (ACK's Terway) the VPC is
    split in two halves: node vSwitches take their letter slots in the lower half, pod
    vSwitches theirs in the upper half, so the two can never overlap."""

    vpc_cidr: Cidr = IPv4Network("10.0.0.0/16")
    """VPC CIDR block. Default 10.0.0.0/16 for a VPC the stack creates; prefix /8 to /24.
    Required with `existing_vpc_id`: the existing VPC's CIDR (checked against the VPC's
    CIDR blocks when the program looks the VPC up)."""
    zones: list[str] = Field(min_length=1)
    """Zones that get a vSwitch, e.g. [cn-hangzhou-i]. Required; each must be a zone of
    `alicloud:region`. Training clusters use one zone; inference fleets at least two."""
    declared_zones: list[str] = []
    """Zones of `alicloud:region` the gpu-infra zone list (gpu_infra_facts/zones.json) does
    not have yet, e.g. one opened since it was checked: `zones` may then use them. Default
    none: every zone must be a listed one."""
    vswitch_prefix: int | None = Field(default=None, ge=VSWITCH_PREFIX_BITS[0],
                                       le=VSWITCH_PREFIX_BITS[1])
    """Prefix length of each vSwitch. Default: the VPC prefix + 5 (e.g. /21 in a /16)."""
    vswitch_cidrs: dict[str, Cidr] = {}
    """Explicit vSwitch CIDR per zone, overriding the derived slot. Default none."""
    nat_gateway: bool | None = None
    """Create a NAT gateway, an EIP and SNAT entries so nodes without public IPs reach the
    internet (images, packages, datasets). Default: true for a VPC the stack creates, false
    with `existing_vpc_id` (a VPC you bring usually has its own egress; set true to add a
    NAT gateway to it anyway)."""
    nat_bandwidth_mbps: int = Field(default=200, ge=1, le=EIP_MAX_TRAFFIC_MBPS)
    """Peak bandwidth of the NAT gateway's EIP in Mbit/s (pay by traffic). Default 200;
    1 to 200."""
    flow_logs: bool = False
    """Record the VPC's traffic (vpc.FlowLog, all traffic) into a `vpc-flow` store of the
    stack's log project (`logs`). Default false: SLS bills flow logs per GB written, and a GPU
    stack moves terabytes of data through its VPC (the `prod-vpc-flow-logs` policy rule is
    advisory for that reason)."""
    pod_vswitches: bool = False
    """Give each zone a second vSwitch for pod IPs (Terway). Default: true with
    `platform: ack` (which needs them), false otherwise (which has no pods)."""
    pod_vswitch_prefix: int | None = Field(default=None, ge=VSWITCH_PREFIX_BITS[0],
                                           le=VSWITCH_PREFIX_BITS[1])
    """Prefix length of each pod vSwitch. Default: the node vSwitches' one."""
    pod_vswitch_cidrs: dict[str, Cidr] = {}
    """Explicit pod vSwitch CIDR per zone, overriding the derived slot. Default none."""
    existing_vpc_id: str | None = Field(default=None, pattern=r"^vpc-[a-z0-9]+$")
    """Bring your own VPC: its id (vpc-...). Default none (a VPC is created). `vpc_cidr`
    is then required and states the existing VPC's CIDR (or the part of it the stack
    uses); it scopes security and NAS rules."""
    existing_vswitch_ids: dict[str, Annotated[str, Field(pattern=r"^vsw-[a-z0-9]+$")]] = {}
    """Bring your own vSwitches: zone -> vsw-... id, one per zone of `zones`. Default none.
    Required with `existing_vpc_id`, not allowed without it."""

    @property
    def creates_nat(self) -> bool:
        """Whether the stack creates NAT egress (`nat_gateway`, else only for its own VPC)."""
        return self.nat_gateway if self.nat_gateway is not None else not self.existing_vpc_id

    @property
    def _half(self) -> int:
        """Prefix length of the block each kind of vSwitch is carved from: the VPC's, or its
        halves with pod vSwitches."""
        return self.vpc_cidr.prefixlen + (1 if self.pod_vswitches else 0)

    @property
    def effective_vswitch_prefix(self) -> int:
        """The vSwitch prefix length in force."""
        return self.vswitch_prefix or min(self._half + ZONE_SLOTS_BITS, VSWITCH_PREFIX_BITS[1])

    @property
    def effective_pod_vswitch_prefix(self) -> int:
        """The pod vSwitch prefix length in force."""
        return self.pod_vswitch_prefix or self.effective_vswitch_prefix

    def vswitch_cidr(self, zone_id: str) -> IPv4Network:
        """The vSwitch CIDR of `zone_id`: the explicit one, else the slot of its letter."""
        if zone_id in self.vswitch_cidrs:
            return self.vswitch_cidrs[zone_id]
        return self._slot(zone_id, self.effective_vswitch_prefix, upper=False)

    def pod_vswitch_cidr(self, zone_id: str) -> IPv4Network:
        """The pod vSwitch CIDR of `zone_id` (with `pod_vswitches`): the explicit one, else
        the slot of its letter in the VPC's upper half."""
        if zone_id in self.pod_vswitch_cidrs:
            return self.pod_vswitch_cidrs[zone_id]
        return self._slot(zone_id, self.effective_pod_vswitch_prefix, upper=True)

    def _slot(self, zone_id: str, prefix: int, *, upper: bool) -> IPv4Network:
        """The one allocator: slot `letter` of `/prefix` in the VPC (or its lower or upper
        half with pod vSwitches)."""
        field = "pod_vswitch" if upper else "vswitch"
        if prefix < self._half:
            raise ValueError(f"zone {zone_id}: a /{prefix} {field.replace('_', ' ')} does not "
                             f"fit the /{self._half} it is carved from; set a longer "
                             f"{field}_prefix")
        slots = 2 ** (prefix - self._half)  # counted, never listed (a /8 in /29s)
        index = ord(zone_letter(zone_id)) - ord("a")
        if not 0 <= index < slots:
            raise ValueError(
                f"zone {zone_id}: letter slot {index} does not fit the {slots} "
                f"/{prefix} slots of {self._block(upper)}; "
                f"set {field}_cidrs for it or a longer {field}_prefix"
            )
        start = int(self._block(upper).network_address) + index * 2 ** (32 - prefix)
        return IPv4Network((start, prefix))

    def _block(self, upper: bool) -> IPv4Network:
        if not self.pod_vswitches:
            return self.vpc_cidr
        lower_half, upper_half = self.vpc_cidr.subnets(prefixlen_diff=1)
        return upper_half if upper else lower_half

    @model_validator(mode="after")
    def _check_layout(self) -> NetworkConfig:
        problems: list[str] = []
        low, high = VPC_PREFIX_BITS
        if not low <= self.vpc_cidr.prefixlen <= high:
            problems.append(f"vpc_cidr: {self.vpc_cidr} has prefix /{self.vpc_cidr.prefixlen};"
                            f" allowed /{low} to /{high}")
        reserved = reserved_overlap(self.vpc_cidr)
        if reserved:
            problems.append(f"vpc_cidr: {self.vpc_cidr} overlaps {reserved[0]} "
                            f"({reserved[1]}), which a VPC may not use; use a range of "
                            f"{', '.join(map(str, PRIVATE_RANGES))}")
        derived = self.effective_vswitch_prefix
        if self.vswitch_prefix is None and derived < VSWITCH_PREFIX_BITS[0] and (
                set(self.zones) - set(self.vswitch_cidrs)):
            problems.append(f"vswitch_prefix: the default /{derived} (the VPC's "
                            f"/{self.vpc_cidr.prefixlen} + {ZONE_SLOTS_BITS}) is wider than a "
                            f"vSwitch may be (/{VSWITCH_PREFIX_BITS[0]} to "
                            f"/{VSWITCH_PREFIX_BITS[1]}); set vswitch_prefix, e.g. "
                            f"{VSWITCH_PREFIX_BITS[0]}")
        if self.effective_vswitch_prefix < self.vpc_cidr.prefixlen:
            problems.append(f"vswitch_prefix: /{self.effective_vswitch_prefix} is shorter than"
                            f" the VPC's /{self.vpc_cidr.prefixlen}")
        if len(set(self.zones)) != len(self.zones):
            problems.append("zones: each zone may be listed once")
        problems += [f"{field}.{zone}: {zone} is not in zones"
                     for field, cidrs in (("vswitch_cidrs", self.vswitch_cidrs),
                                          ("pod_vswitch_cidrs", self.pod_vswitch_cidrs))
                     for zone in sorted(set(cidrs) - set(self.zones))]
        if (self.pod_vswitch_cidrs or self.pod_vswitch_prefix) and not self.pod_vswitches:
            problems.append("pod_vswitch_cidrs: pod vSwitches are only for platform ack "
                            "(pod_vswitches: true)")
        if not problems:
            problems += self._vswitch_problems()
        if self.existing_vswitch_ids and not self.existing_vpc_id:
            problems.append("existing_vswitch_ids: needs existing_vpc_id")
        if self.existing_vpc_id and "vpc_cidr" not in self.model_fields_set:
            problems.append("vpc_cidr: required with existing_vpc_id: state the existing "
                            "VPC's CIDR block (it scopes the shared file system's and the "
                            "cluster's rules); the default 10.0.0.0/16 is only for a VPC "
                            "the stack creates")
        if self.existing_vpc_id:
            problems += [f"existing_vswitch_ids: no vSwitch id for zone {zone}"
                         for zone in self.zones if zone not in self.existing_vswitch_ids]
        problems += [f"existing_vswitch_ids.{zone}: {zone} is not in zones"
                     for zone in sorted(set(self.existing_vswitch_ids) - set(self.zones))]
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _vswitch_problems(self) -> list[str]:
        """Every vSwitch (node and pod) inside the VPC, of an allowed prefix, and no two of
        them overlapping."""
        problems: list[str] = []
        cidrs: dict[str, IPv4Network] = {}
        kinds = [("vswitch_cidrs", self.vswitch_cidr)]
        if self.pod_vswitches:
            kinds.append(("pod_vswitch_cidrs", self.pod_vswitch_cidr))
        for field, allocate in kinds:
            for zone in self.zones:
                try:
                    cidrs[f"{field}.{zone}"] = allocate(zone)
                except ValueError as slot_error:
                    problems.append(f"zones: {slot_error}")
        low, high = VSWITCH_PREFIX_BITS
        for path, cidr in cidrs.items():
            if not cidr.subnet_of(self.vpc_cidr):
                problems.append(f"{path}: {cidr} is outside vpc_cidr {self.vpc_cidr}")
            elif not low <= cidr.prefixlen <= high:
                problems.append(f"{path}: {cidr} has prefix /{cidr.prefixlen};"
                                f" allowed /{low} to /{high}")
        paths = list(cidrs)
        for i, first in enumerate(paths):
            problems += [f"{second}: {cidrs[second]} overlaps {cidrs[first]} of "
                         f"{_owner(first)}" for second in paths[i + 1:]
                         if cidrs[first].overlaps(cidrs[second])]
        return problems


def _owner(path: str) -> str:
    """`vswitch_cidrs.cn-x-a` -> `cn-x-a`; `pod_vswitch_cidrs.cn-x-a` -> `the pods of cn-x-a`."""
    field, zone = path.split(".", 1)
    return f"the pods of {zone}" if field.startswith("pod_") else zone
