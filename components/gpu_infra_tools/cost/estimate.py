"""Estimate a plan's cost from its planned resources (type token + inputs), as Infracost does
from a Terraform plan. Only the bucket sizes come from the stack config
(`storage.buckets.expected_gib`): a plan does not hold them.

Models (prices in prices.yaml; GPU on-demand prices from the GPU catalog):
- ecs.Instance: on-demand catalog price per hour; spot (SpotAsPriceGo) at the spot price
  factor (default 0.7 of on-demand); SpotWithPriceLimit at min(cap, that); PrePaid at the
  subscription factor; plus system and data disks.
- ecs.ReservedInstance: costs `instance_amount` x on-demand price x the reserved factor of its
  offering type and term, used or not; the matching on-demand instances (same type, and zone
  for a Zone-scoped one), fixed or the on-demand part of a scaling group or node pool, then
  pay nothing for compute: reserved capacity for the steady base, spot for the rest.
- ess.ScalingGroup: at the stack's `fleet.typical_size` (the GPU fleet), else desired
  capacity, else min size; the first instance type of the active scaling configuration;
  on-demand base + percentage above it, the rest spot.
- Disks per GiB-month by category and PL; AutoPL provisioned IOPS per IOPS-month.
- NAS: Extreme by capacity bought; general-purpose is pay per use (usage-based); CPFS and
  KMS keys have no confirmed price (unpriced).
- OSS: expected GiB per storage class from the config, else usage-based.
- Simple Message Queue (MNS) queue: a fee per queue-day, shown per month (requests: 20
  million a month free per account, left out).
- SLS log stores: the raw log data ingested, usage-based (no confirmed price).
- Cloud Backup vaults: the backup data stored, usage-based (no confirmed price).
- Types listed under `unpriced` in prices.yaml stay unpriced with the reason as the note.
- Live prices (`Assumptions.live`, `cost --live-prices`): a type's live on-demand price
  replaces the catalog's, its live spot price the spot factor, its live one-month
  subscription price the monthly subscription factor.
- Enhanced NAT: instance hour + CU (usage-based). EIP pay-by-traffic: configuration fee per
  hour when bound to a NAT gateway or load balancer + data per GB (usage-based). NLB/ALB:
  instance hour + LCU (usage-based).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_infra import catalog
from gpu_infra.blocks.conventions import FLEET_TAG_KEY
from gpu_infra.schema import ClusterConfig
from gpu_infra.schema.stack import ClusterBase
from gpu_infra_facts import function_compute as fc
from gpu_infra_facts import types as t
from gpu_infra_facts.allowed import SPOT_STRATEGIES
from gpu_infra_tools.alibaba.prices import Billing, LivePrices
from gpu_infra_tools.cost.model import (
    BillingPeriod,
    CostComponent,
    Estimate,
    GpuCapacity,
    ResourceCost,
)
from gpu_infra_tools.cost.prices import PriceBook, price_book
from gpu_infra_tools.plan.engine import Plan, PlannedResource

DEFAULT_DISK_CATEGORY = "cloud_efficiency"
"""The provider's default system and data disk category."""
DEFAULT_ESSD_PL = "PL1"
COVERABLE = (t.INSTANCE, t.SCALING_GROUP, t.NODE_POOL)
"""What a reserved instance's coupon covers: pay-as-you-go instances, fixed or in a fleet."""
ON_DEMAND_LINE = "Compute (on-demand"
"""How the on-demand compute component of an instance or fleet is named."""
SAVINGS_PLAN_TYPE = "savings plan (account, not in the stack)"
"""The resource type the estimate gives a stack's savings plan."""
CATALOG_PRICES = "gpu_infra/catalog/gpu_catalog.yaml"
"""Where GPU instance prices come from offline (dated, each with region and source)."""
FREE_EIP_TARGETS = ("EcsInstance", "NetworkInterface")
"""EIPs bound to these pay no configuration fee [EIP]."""


@dataclass(frozen=True)
class Fleet:
    """What prices a group of like instances (an ESS group, an ACK node pool)."""

    size: float
    basis: str
    """What `size` is (desired capacity, min size, ...), for the note."""
    maximum: float | None
    types: list[Any]
    launcher: str
    """The resource that launches them (scaling configuration, node pool)."""
    spot: bool
    base: float
    percentage: float | None
    price_limits: list[Any]
    system: dict[str, Any]
    data_disks: list[Any]
    prepaid_factor: float | None = None


@dataclass
class Assumptions:
    """What the estimate assumes beyond list prices."""

    spot_price_factor: float | None = None
    """Fraction of the on-demand price spot capacity pays. Default: prices.yaml (0.7)."""
    live: LivePrices | None = None
    """Prices read from the account (`cost --live-prices`): a type's live on-demand, spot and
    one-month subscription prices replace the catalog price and the factors. Default none:
    the dated catalog prices."""


FUNCTION_RUN_SECONDS = 1.0
"""How long one timer run of a stack's function is assumed to take (the queue-metric
publisher: two CloudMonitor reads and one put; its timeout is 30 s). An assumption."""


def _cron(trigger: dict[str, Any]) -> str:
    """A trigger's `cronExpression` ('' when its config is not JSON, e.g. unknown)."""
    try:
        config = json.loads(trigger.get("triggerConfig") or "{}")
    except (TypeError, ValueError):
        return ""
    return str(config.get("cronExpression", "")) if isinstance(config, dict) else ""


class _Estimator:
    """One estimate: the price book, the plan's resources by id and urn, the stack."""

    def __init__(self, resources: Sequence[PlannedResource], cluster: ClusterConfig | None,
                 book: PriceBook, assumptions: Assumptions):
        self.book = book
        self.cluster = cluster
        self.gpu_types = cluster.gpu_types if cluster is not None else catalog.CATALOG_ONLY
        self.resources = [r for r in resources if r.custom]
        self.by_urn = {r.urn: r for r in resources}
        self.by_id = {r.id: r for r in self.resources if r.id}
        discounts = book.discounts
        self.live = assumptions.live
        self.spot_factor = (assumptions.spot_price_factor
                            if assumptions.spot_price_factor is not None
                            else discounts.spot_price_factor.value)
        self.models: dict[str, Callable[[PlannedResource, ResourceCost], None]] = {
            t.INSTANCE: self._instance, t.RESERVED_INSTANCE: self._reserved,
            t.SCALING_GROUP: self._scaling_group,
            t.NODE_POOL: self._node_pool,
            t.MANAGED_KUBERNETES: self._ack_cluster,
            t.ECS_DISK: self._disk,
            t.NAS_FILE_SYSTEM: self._file_system,
            t.BUCKET: self._bucket,
            t.NAT_GATEWAY: self._nat,
            t.EIP_ADDRESS: self._eip,
            t.NLB_LOAD_BALANCER: self._nlb,
            t.ALB_LOAD_BALANCER: self._alb,
            t.KMS_KEY: self._kms,
            t.MNS_QUEUE: self._queue,
            t.LOG_STORE: self._log_store,
            t.HBR_VAULT: self._vault,
            t.IMAGE_PIPELINE_EXECUTION: self._image_build,
            t.FC_FUNCTION: self._function,
        }

    # -- helpers ---------------------------------------------------------------------

    def line(self, name: str, key: str, quantity: float | None, *,
             usage_based: bool = False) -> CostComponent:
        """A component priced from the book's `key` (unknown if the book has no price)."""
        price = self.book.get(key)
        unit = price.unit if price else "unknown"
        period: BillingPeriod = "hour" if unit == "hour" else "month"
        return CostComponent(name, unit, period, None if usage_based else quantity,
                             price.price if price else None, self.book.hours_per_month,
                             usage_based=usage_based,
                             unconfirmed=bool(price and price.unconfirmed))

    def compute(self, name: str, count: float, price: float | None,
                unconfirmed: bool = False) -> CostComponent:
        """`count` instances at `price` per instance-hour."""
        return CostComponent(name, "hour", "hour", count, price, self.book.hours_per_month,
                             unconfirmed=unconfirmed)

    def disks(self, system: dict[str, Any] | None, data: list[Any],
              count: float) -> list[CostComponent]:
        """System and data disk components for `count` instances."""
        lines: list[CostComponent] = []
        disks = ([("System disk", system)] if system else []) + [
            (f"Data disk {d.get('name') or index}", d)
            for index, d in enumerate(data) if isinstance(d, dict)]
        for label, disk in disks:
            lines += self.disk_lines(label, disk.get("category"), disk.get("size"),
                                     disk.get("performanceLevel"),
                                     disk.get("provisionedIops"), count)
        return lines

    def disk_lines(self, label: str, category: Any, size: Any, level: Any, iops: Any,
                   count: float) -> list[CostComponent]:
        """Capacity (and AutoPL provisioned IOPS) of `count` disks."""
        category = category or DEFAULT_DISK_CATEGORY
        key = f"disk.{category}"
        if category == "cloud_essd":
            key += f".{level or DEFAULT_ESSD_PL}"
        gib = _number(size)
        tier = f" {level or DEFAULT_ESSD_PL}" if category == "cloud_essd" else ""
        lines = [self.line(f"{label} ({category}{tier}, {gib:g} GiB)" if gib is not None
                           else f"{label} ({category}{tier})", key,
                           None if gib is None else gib * count)]
        provisioned = _number(iops)
        if category == "cloud_auto" and provisioned:
            lines.append(self.line(f"{label} provisioned IOPS ({provisioned:g})",
                                   "disk.cloud_auto.provisioned_iops", provisioned * count))
        return lines

    def on_demand(self, instance_type: Any) -> tuple[float | None, str]:
        """On-demand price per hour of a type (live, else the catalog's) and a note on where
        it is from."""
        entry = self.gpu_types.get(instance_type) if isinstance(instance_type, str) else None
        price = self._live("on_demand", instance_type) or (entry.price if entry else None)
        if price is None:
            return None, f"no catalog price for {instance_type}"
        note = f"{instance_type} on-demand {price.cny_per_hour:g}/h ({price.region}, " \
               f"{price.date}, {price.source})"
        return price.cny_per_hour, note

    def slot(self, instance_type: Any, capacity: str, count: float, paid: float | None,
             on_demand: float | None) -> GpuCapacity:
        """`count` instances of `instance_type` paid for as `capacity`, with their GPUs."""
        entry = self.gpu_types.get(instance_type) if isinstance(instance_type, str) else None
        return GpuCapacity(str(instance_type), capacity, count, paid, on_demand,
                           entry.gpu_count if entry else None)

    def _live(self, billing: Billing, instance_type: Any) -> catalog.CatalogPrice | None:
        if self.live is None or not isinstance(instance_type, str):
            return None
        return self.live.get(billing, instance_type)

    def spot_basis(self, instance_type: Any) -> str:
        """How spot is priced for a type: `live` or `x<factor>`."""
        return "live" if self._live("spot", instance_type) else f"x{self.spot_factor:g}"

    def prepaid(self, instance_type: Any, on_demand: float | None, factor: float,
                months: float) -> float | None:
        """A subscription's hourly price: the live one-month price for a monthly term,
        else `factor` of on-demand."""
        live = self._live("month", instance_type)
        if live is not None and factor == self.book.discounts.prepaid_month_factor.value \
                and months < 12:
            return live.cny_per_hour
        return None if on_demand is None else on_demand * factor

    def spot(self, on_demand: float | None, cap: float | None,
             instance_type: Any = None) -> float | None:
        """What spot pays per hour: the live spot price, else the spot factor of on-demand;
        at most `cap`."""
        live = self._live("spot", instance_type)
        estimate = live.cny_per_hour if live is not None else \
            None if on_demand is None else on_demand * self.spot_factor
        if cap is None:
            return estimate
        return cap if estimate is None else min(cap, estimate)

    def fleet_size(self, resource: PlannedResource, desired: tuple[str, float | None],
                   minimum: tuple[str, float | None]) -> tuple[float, str]:
        """(size, what it is) a scaling group or node pool is priced at: the stack's
        `fleet.typical_size` for the GPU fleet (tagged GpuFleet), else the desired size,
        else the minimum (0 when unknown)."""
        fleet = getattr(self.cluster, "fleet", None)
        typical = getattr(fleet, "typical_size", None)
        tags = resource.inputs.get("tags")
        if typical is not None and isinstance(tags, dict) and FLEET_TAG_KEY in tags:
            return float(typical), "typical size (fleet.typical_size)"
        for label, value in (desired, minimum):
            if value is not None:
                return value, label
        return 0.0, minimum[0]

    def zones_of(self, resource: PlannedResource) -> set[str]:
        """The zones a resource may place instances in: an instance's zone, a fleet's
        vSwitches' zones (empty when unknown)."""
        if resource.type == t.INSTANCE:
            zone = self.zone_of(resource)
            return {zone} if zone else set()
        switches = [self.by_id.get(v) for v in resource.inputs.get("vswitchIds") or []
                    if isinstance(v, str)]
        zones = {s.inputs.get("zoneId") for s in switches if s is not None}
        return {z for z in zones if isinstance(z, str)} if None not in zones else set()

    def zone_of(self, resource: PlannedResource) -> str | None:
        """The zone of an instance (its own input, else its vSwitch's)."""
        zone = resource.inputs.get("availabilityZone")
        if isinstance(zone, str):
            return zone
        vswitch_id = resource.inputs.get("vswitchId")
        switch = self.by_id.get(vswitch_id) if isinstance(vswitch_id, str) else None
        zone = switch.inputs.get("zoneId") if switch else None
        return zone if isinstance(zone, str) else None

    # -- models ----------------------------------------------------------------------

    def _instance(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        kind = inputs.get("instanceType")
        on_demand, note = self.on_demand(kind)
        strategy = inputs.get("spotStrategy")
        if inputs.get("instanceChargeType") == "PrePaid":
            factor = self._prepaid_factor(inputs.get("period"), inputs.get("periodUnit"))
            paid = self.prepaid(kind, on_demand, factor, _number(inputs.get("period")) or 1)
            capacity, label = "prepaid", f"subscription, x{factor:g}"
        elif strategy in SPOT_STRATEGIES:
            cap = _number(inputs.get("spotPriceLimit")) \
                if strategy == "SpotWithPriceLimit" else None
            paid = self.spot(on_demand, cap, kind)
            capacity, label = "spot", f"spot {strategy}, {self.spot_basis(kind)}"
        else:
            paid, capacity, label = on_demand, "on_demand", "on-demand"
        cost.components.append(self.compute(f"Compute ({label}, {kind})", 1, paid))
        cost.gpu.append(self.slot(kind, capacity, 1, paid, on_demand))
        cost.note = note
        system = {"category": inputs.get("systemDiskCategory"),
                  "size": inputs.get("systemDiskSize"),
                  "performanceLevel": inputs.get("systemDiskPerformanceLevel"),
                  "provisionedIops": inputs.get("systemDiskProvisionedIops")}
        cost.components += self.disks(system, inputs.get("dataDisks") or [], 1)

    def _prepaid_factor(self, period: Any, unit: Any) -> float:
        months = _number(period) or 1
        discounts = self.book.discounts
        if unit == "Year" or (unit != "Week" and months >= 12):
            return discounts.prepaid_year_factor.value
        return discounts.prepaid_month_factor.value

    def _reserved(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        kind = inputs.get("instanceType")
        amount = _number(inputs.get("instanceAmount")) or 1
        on_demand, note = self.on_demand(kind)
        factor = self._reserved_factor(inputs)
        fee = None if on_demand is None or factor is None else on_demand * factor
        offering = inputs.get("offeringType") or "All Upfront"
        cost.components.append(self.compute(
            f"Reserved instance {kind} ({offering}, x{factor:g} of on-demand)"
            if factor is not None else f"Reserved instance {kind} ({offering})",
            amount, fee, unconfirmed=True))
        cost.gpu.append(self.slot(kind, "reserved", amount,
                                    None if fee is None else fee * amount, 0.0))
        cost.note = (f"{note}; covers {amount:g} matching on-demand instance(s), "
                     "billed whether used or not")

    def _reserved_factor(self, inputs: dict[str, Any]) -> float | None:
        discounts = self.book.discounts
        if inputs.get("periodUnit") == "Month":
            return discounts.reserved_month_factor.value
        offering = inputs.get("offeringType") or "All Upfront"
        years = int(_number(inputs.get("period")) or 1)
        by_years = next((factors for kind, factors in discounts.reserved_factor.items()
                         if kind == offering), {})
        return by_years.get(years)

    def _scaling_group(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        config = next((r for r in self.resources if r.type == t.SCALING_CONFIGURATION
                       and r.inputs.get("scalingGroupId") == resource.id
                       and r.inputs.get("active", True) is not False), None)
        if config is None:
            cost.note = "no active scaling configuration in the plan"
            return
        size, basis = self.fleet_size(resource, ("desired capacity",
                                                 _number(inputs.get("desiredCapacity"))),
                                      ("min size", _number(inputs.get("minSize"))))
        self._fleet(cost, Fleet(
            size=size, basis=basis, maximum=_number(inputs.get("maxSize")),
            types=config.inputs.get("instanceTypes") or [config.inputs.get("instanceType")],
            launcher=config.name, spot=config.inputs.get("spotStrategy") in SPOT_STRATEGIES,
            base=_number(inputs.get("onDemandBaseCapacity")) or 0,
            percentage=_number(inputs.get("onDemandPercentageAboveBaseCapacity")),
            price_limits=config.inputs.get("spotPriceLimits") or [],
            system={"category": config.inputs.get("systemDiskCategory"),
                    "size": config.inputs.get("systemDiskSize"),
                    "performanceLevel": config.inputs.get("systemDiskPerformanceLevel")},
            data_disks=config.inputs.get("dataDisks") or []))

    def _node_pool(self, resource: PlannedResource, cost: ResourceCost) -> None:
        """An ACK node pool, like a scaling group: at the fleet's typical size, else
        desired_size, else the autoscaler's min_size; on-demand base and percentage with spot
        above; PrePaid at the subscription factor."""
        inputs = resource.inputs
        scaling = inputs.get("scalingConfig") or {}
        desired = _number(inputs.get("desiredSize"))
        size, basis = self.fleet_size(resource, ("desired size", desired),
                                      ("autoscaler min size", _number(scaling.get("minSize"))))
        prepaid = inputs.get("instanceChargeType") == "PrePaid"
        self._fleet(cost, Fleet(
            size=size, basis=basis,
            maximum=_number(scaling.get("maxSize")) if desired is None else None,
            types=inputs.get("instanceTypes") or [], launcher=resource.name,
            spot=inputs.get("spotStrategy") in SPOT_STRATEGIES,
            base=_number(inputs.get("onDemandBaseCapacity")) or 0,
            percentage=_number(inputs.get("onDemandPercentageAboveBaseCapacity")),
            price_limits=inputs.get("spotPriceLimits") or [],
            system={"category": inputs.get("systemDiskCategory"),
                    "size": inputs.get("systemDiskSize"),
                    "performanceLevel": inputs.get("systemDiskPerformanceLevel"),
                    "provisionedIops": inputs.get("systemDiskProvisionedIops")},
            data_disks=inputs.get("dataDisks") or [],
            prepaid_factor=self._prepaid_factor(inputs.get("period"), "Month")
            if prepaid else None))

    def _fleet(self, cost: ResourceCost, fleet: Fleet) -> None:
        """Compute and disks of `fleet.size` instances of its first type."""
        size, kind = fleet.size, fleet.types[0] if fleet.types else None
        on_demand, price_note = self.on_demand(kind)
        base = min(fleet.base, size)
        percentage = 100 if fleet.percentage is None or not fleet.spot else fleet.percentage
        on_demand_count = base + math.ceil((size - base) * percentage / 100)
        spot_count = size - on_demand_count
        cap = next((_number(item.get("priceLimit")) for item in fleet.price_limits
                    if isinstance(item, dict) and item.get("instanceType") == kind), None)
        spot_paid = self.spot(on_demand, cap, kind)
        if fleet.prepaid_factor is not None:
            paid = self.prepaid(kind, on_demand, fleet.prepaid_factor, 1)
            cost.components.append(self.compute(
                f"Compute (subscription, x{fleet.prepaid_factor:g}, {kind})", size, paid))
            cost.gpu.append(self.slot(kind, "prepaid", size, _times(paid, size),
                                        _times(on_demand, size)))
        else:
            cost.components.append(self.compute(f"Compute (on-demand, {kind})",
                                                on_demand_count, on_demand))
            cost.gpu.append(self.slot(kind, "on_demand", on_demand_count,
                                        _times(on_demand, on_demand_count),
                                        _times(on_demand, on_demand_count)))
        if fleet.spot and fleet.prepaid_factor is None:
            cost.components.append(self.compute(
                f"Compute (spot, {self.spot_basis(kind)}, {kind})",
                spot_count, spot_paid))
            cost.gpu.append(self.slot(kind, "spot", spot_count,
                                        _times(spot_paid, spot_count),
                                        _times(on_demand, spot_count)))
        cost.components += self.disks(fleet.system, fleet.data_disks, size)
        cost.note = (f"at {fleet.basis} {size:g} (max {fleet.maximum:g}) of {kind}, the first "
                     f"type of {fleet.launcher}; {price_note}" if fleet.maximum is not None
                     else f"at {fleet.basis} {size:g} of {kind}; {price_note}")

    def _ack_cluster(self, resource: PlannedResource, cost: ResourceCost) -> None:
        spec = resource.inputs.get("clusterSpec") or "ack.pro.small"
        cost.components.append(self.line(f"ACK Pro management fee ({spec})",
                                         f"container.{spec}", 1))
        cost.note = "the cluster's fee; its nodes are priced with their node pools"

    def _disk(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        cost.components += self.disk_lines("Disk", inputs.get("category"), inputs.get("size"),
                                           inputs.get("performanceLevel"),
                                           inputs.get("provisionedIops"), 1)

    def _file_system(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        kind, storage = inputs.get("fileSystemType") or "standard", inputs.get("storageType")
        capacity = _number(inputs.get("capacity"))
        if kind == "extreme":
            cost.components.append(self.line(f"Extreme NAS {storage} ({capacity:g} GiB)",
                                             f"storage.nas_extreme.{storage}", capacity))
        elif kind in ("cpfs", "cpfsse"):
            cost.components.append(self.line(f"CPFS ({capacity:g} GiB)", "storage.cpfs",
                                             capacity))
        else:
            cost.components.append(self.line(f"General-purpose NAS {storage} (per GiB used)",
                                             f"storage.nas.{storage}", None, usage_based=True))
            cost.note = "general-purpose NAS is billed by the GiB stored: usage-based"

    def _bucket(self, resource: PlannedResource, cost: ResourceCost) -> None:
        name = str(resource.inputs.get("bucket") or "")
        zrs = resource.inputs.get("redundancyType") == "ZRS"
        expected: dict[str, int] = {}
        purpose = None
        if isinstance(self.cluster, ClusterBase):
            sizes = self.cluster.storage.buckets.expected_gib
            purpose = next((p for p in sizes if name.endswith(f"-{p}")), None)
            expected = {str(tier): gib for tier, gib in sizes.get(purpose, {}).items()} \
                if purpose else {}
        if not expected:
            cost.components.append(self.line(
                "Storage (Standard, per GiB stored)",
                "storage.oss.Standard" + (".ZRS" if zrs else ""), None, usage_based=True))
            cost.note = "set storage.buckets.expected_gib to estimate storage"
            return
        for tier, gib in expected.items():
            key = f"storage.oss.{tier}" + (".ZRS" if zrs and tier in ("Standard", "IA") else "")
            cost.components.append(self.line(f"Storage ({tier}, {gib:g} GiB)", key, gib))
        cost.note = f"expected sizes of {purpose} (storage.buckets.expected_gib)"

    def _nat(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        if inputs.get("natType") == "Enhanced" and inputs.get("internetChargeType") in (
                None, "PayByLcu"):
            cost.components += [self.line("Instance", "network.nat_enhanced.instance", 1),
                                self.line("Capacity units (CU)", "network.nat_enhanced.cu",
                                          None, usage_based=True)]
        else:
            cost.note = f"no price model for natType {inputs.get('natType')}"

    def _eip(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        if inputs.get("internetChargeType") != "PayByTraffic" or \
                inputs.get("paymentType", "PayAsYouGo") != "PayAsYouGo":
            cost.note = "only pay-as-you-go pay-by-traffic EIPs are modelled"
            return
        targets = [r.inputs.get("instanceType") for r in self.resources
                   if r.type == t.EIP_ASSOCIATION and r.inputs.get("allocationId") == resource.id]
        if targets and all(t in FREE_EIP_TARGETS for t in targets):
            cost.note = "no configuration fee when bound to a VPC ECS instance"
        else:
            cost.components.append(self.line("Configuration fee", "network.eip_traffic.config",
                                             1))
        cost.components.append(self.line("Outbound data (per GB)", "network.eip_traffic.data",
                                         None, usage_based=True))

    def _nlb(self, _: PlannedResource, cost: ResourceCost) -> None:
        cost.components += [self.line("Instance", "network.nlb.instance", 1),
                            self.line("Load balancer capacity units (LCU)", "network.nlb.lcu",
                                      None, usage_based=True)]

    def _alb(self, resource: PlannedResource, cost: ResourceCost) -> None:
        edition = resource.inputs.get("loadBalancerEdition") or "Standard"
        cost.components += [self.line(f"Instance ({edition})", f"network.alb.{edition}", 1),
                            self.line("Load balancer capacity units (LCU)", "network.alb.lcu",
                                      None, usage_based=True)]

    def _kms(self, _: PlannedResource, cost: ResourceCost) -> None:
        cost.components.append(self.line("Key", "security.kms.key", 1))
        cost.note = "KMS key price not confirmed"

    def _queue(self, _: PlannedResource, cost: ResourceCost) -> None:
        cost.components.append(self.line("Queue", "messaging.mns.queue", 1))
        cost.note = "requests left out: the first 20 million a month are free per account"

    def _function(self, resource: PlannedResource, cost: ResourceCost) -> None:
        inputs = resource.inputs
        runs = self._timer_runs(inputs.get("functionName"))
        if runs is None:
            cost.components.append(self.line("Compute units (CU)", "serverless.fc.cu", None,
                                             usage_based=True))
            cost.note = "run by events, not a timer: usage-based"
            return
        seconds = runs * FUNCTION_RUN_SECONDS
        units = runs * fc.CU_PER_INVOCATION + seconds * (
            float(inputs.get("cpu") or 0) * fc.CU_PER_VCPU_SECOND
            + float(inputs.get("memorySize") or 0) / 1024 * fc.CU_PER_MEMORY_GB_SECOND
            + float(inputs.get("diskSize") or 0) / 1024 * fc.CU_PER_DISK_GB_SECOND)
        line = self.line(f"Compute units ({runs:,.0f} runs of about "
                         f"{FUNCTION_RUN_SECONDS:g} s)", "serverless.fc.cu", units)
        line.unconfirmed = True
        cost.components.append(line)
        cost.note = (f"{runs:,.0f} timer runs a month, each assumed to take about "
                     f"{FUNCTION_RUN_SECONDS:g} s; the free quota is not deducted")

    def _timer_runs(self, function_name: Any) -> float | None:
        """Runs a month of the function `function_name` by its `@every Nm` timer triggers;
        None without one."""
        minutes = [int(match.group(1)) for r in self.resources
                   if r.type == t.FC_TRIGGER and r.inputs.get("functionName") == function_name
                   and r.inputs.get("triggerType") == fc.TIMER_TRIGGER
                   and (match := re.match(fc.EVERY_PATTERN, _cron(r.inputs)))]
        if not minutes or not function_name:
            return None
        return sum(self.book.hours_per_month * 60 / every for every in minutes)

    def _log_store(self, _: PlannedResource, cost: ResourceCost) -> None:
        cost.components.append(self.line("Ingested log data (per GB)", "logging.sls.ingest",
                                         None, usage_based=True))
        cost.note = "billed by the logs the nodes write: usage-based"

    def _vault(self, _: PlannedResource, cost: ResourceCost) -> None:
        cost.components.append(self.line("Backup data stored (per GiB)",
                                         "backup.hbr.vault_storage", None, usage_based=True))
        cost.note = "billed by the backups it holds: usage-based"

    def _image_build(self, resource: PlannedResource, cost: ResourceCost) -> None:
        pipeline_id = resource.inputs.get("imagePipelineId")
        pipeline = self.by_id.get(pipeline_id) if isinstance(pipeline_id, str) else None
        instance_type = pipeline.inputs.get("instanceType") if pipeline else None
        price, note = self.on_demand(instance_type)
        cost.components.append(CostComponent(
            f"Build instance ({instance_type}, per build hour)", "hour", "hour", None, price,
            self.book.hours_per_month, usage_based=True))
        cost.note = f"one build of 30-60 min; {note}; the image's snapshot is billed as " \
                    "snapshot storage (not modelled)"

    # -- the estimate ----------------------------------------------------------------

    def component_of(self, resource: PlannedResource) -> str:
        """`module:Name name` of the nearest component above the resource."""
        parent = self.by_urn.get(resource.parent or "")
        if parent is None:
            return "(stack)"
        return f"{parent.type.removeprefix('gpu-infra:')} {parent.name}"

    def resource_cost(self, resource: PlannedResource) -> ResourceCost:
        cost = ResourceCost(resource.name, resource.type, self.component_of(resource))
        model = self.models.get(resource.type)
        if model is not None:
            model(resource, cost)
        elif resource.type in self.book.free:
            cost.free = True
        else:
            cost.note = self.book.unpriced.get(resource.type,
                                               "no price model for this resource type")
        return cost

    def apply_reservations(self, costs: dict[str, ResourceCost]) -> None:
        """Move on-demand instances a reserved instance covers to `reserved` (paying 0):
        fixed nodes and the on-demand part of scaling groups and node pools (their steady
        base), in plan order, up to `instanceAmount`; a Zone-scoped one only where all the
        instances are in its zone."""
        for reservation in (r for r in self.resources if r.type == t.RESERVED_INSTANCE):
            inputs = reservation.inputs
            left = _number(inputs.get("instanceAmount")) or 1
            zone = inputs.get("zoneId") if inputs.get("scope") == "Zone" else None
            kind = inputs.get("instanceType")
            for resource in self.resources:
                if resource.type not in COVERABLE or (
                        zone is not None and self.zones_of(resource) != {zone}):
                    continue
                cost = costs[resource.urn]
                for slot in [s for s in on_demand_slots(cost) if s.instance_type == kind]:
                    covered = min(slot.count, left)
                    if covered > 0:
                        self.cover(cost, slot, covered, "reserved",
                                   f"covered by reserved instance {reservation.name}")
                        left -= covered

    def apply_savings_plan(self, costs: dict[str, ResourceCost]) -> ResourceCost | None:
        """The stack's savings plan (`savings_plan`): its commitment, paid every hour, and
        the on-demand GPU instances (of its family) it covers, in plan order, moved to
        `savings_plan` (paying 0) while their pay-as-you-go price fits in what the
        commitment buys (commitment / price factor per hour). None without a plan."""
        plan = getattr(self.cluster, "savings_plan", None)
        if plan is None:
            return None
        left = plan.hourly_commitment_cny / plan.price_factor
        for cost in costs.values():
            for slot in [s for s in on_demand_slots(cost) if s.on_demand_hourly is not None
                         and plan.instance_family in (None, catalog.family_of(s.instance_type))]:
                each = (slot.on_demand_hourly or 0.0) / slot.count
                covered = min(slot.count, left / each) if each else slot.count
                if covered > 0:
                    self.cover(cost, slot, covered, "savings_plan", "covered by the savings plan")
                    left -= covered * each
        scope = f"{plan.instance_family} family" if plan.instance_family else "universal"
        commitment = ResourceCost("savings-plan", SAVINGS_PLAN_TYPE, "savings plan (account)")
        commitment.components.append(self.compute(
            f"Savings plan commitment ({scope}, x{plan.price_factor:g} of pay-as-you-go)", 1,
            plan.hourly_commitment_cny))
        commitment.gpu.append(GpuCapacity(scope, "savings_plan", 0, plan.hourly_commitment_cny,
                                          0.0))
        unused = left * plan.price_factor
        commitment.note = (f"bought outside the stack; paid every hour; "
                           f"{unused:,.2f} CNY/h of it is not used by this plan's instances"
                           if unused > 0.005 else "bought outside the stack; fully used")
        return commitment

    def cover(self, cost: ResourceCost, slot: GpuCapacity, count: float, capacity: str,
              why: str) -> None:
        """Move `count` of `slot`'s on-demand instances to `capacity`, paying 0 (what pays
        for them is another line: a reservation's fee, a savings plan's commitment)."""
        line = next(i for i, c in enumerate(cost.components)
                    if c.name.startswith(ON_DEMAND_LINE))
        each = None if slot.on_demand_hourly is None else slot.on_demand_hourly / slot.count
        moved = self.compute(f"Compute ({why}, {slot.instance_type})", count, 0.0)
        if count >= slot.count:
            slot.capacity, slot.paid_hourly = capacity, 0.0
            cost.components[line] = moved
            return
        slot.count -= count
        slot.paid_hourly = slot.on_demand_hourly = _times(each, slot.count)
        cost.components[line].quantity = slot.count
        cost.components.insert(line + 1, moved)
        cost.gpu.append(GpuCapacity(slot.instance_type, capacity, count, 0.0,
                                    _times(each, count), slot.gpus_per_instance))


def on_demand_slots(cost: ResourceCost) -> list[GpuCapacity]:
    """The on-demand instances of `cost` (a new list: covering them adds slots)."""
    return [slot for slot in cost.gpu if slot.capacity == "on_demand" and slot.count > 0]


def estimate(resources: Sequence[PlannedResource], cluster: ClusterConfig | None = None,
             assumptions: Assumptions | None = None,
             book: PriceBook | None = None) -> Estimate:
    """The cost of creating `resources` (a plan's; components are skipped). `cluster` supplies
    the expected bucket sizes."""
    book = book or price_book()
    estimator = _Estimator(resources, cluster, book, assumptions or Assumptions())
    costs = {r.urn: estimator.resource_cost(r) for r in estimator.resources}
    estimator.apply_reservations(costs)
    plan = estimator.apply_savings_plan(costs)
    live = estimator.live
    gpu_prices = (f"ECS DescribePrice in {live.region}, read {_read_on(live)}; "
                  f"{CATALOG_PRICES} for types without one" if live is not None
                  else CATALOG_PRICES)
    return Estimate(book.currency, book.hours_per_month,
                    [*costs.values(), *([plan] if plan else [])],
                    {"spotPriceFactor": estimator.spot_factor,
                     "scalingGroups": "fleet.typical_size, else desired capacity, else "
                                      "min size",
                     "pricesFile": "gpu_infra_tools/cost/prices.yaml",
                     "gpuPrices": gpu_prices})


def _read_on(live: LivePrices) -> str:
    dates = sorted({p.date for prices in live.prices.values() for p in prices.values()})
    return ", ".join(dates) or "no price"


def estimate_plan(plan: Plan, assumptions: Assumptions | None = None) -> Estimate:
    """The estimate of an offline plan."""
    return estimate(plan.resources, plan.cluster, assumptions)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _times(price: float | None, count: float) -> float | None:
    return None if price is None else price * count
