"""The shape of a cost estimate: components, resources, totals (as Infracost JSON:
infracost.py).

Costs are numbers in the estimate's currency; an unknown
cost is None (null), never 0. A usage-based component (traffic, LCUs, pay-per-use storage
without an expected size) has a price but no quantity, so no cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

BillingPeriod = Literal["hour", "month"]
CAPACITIES: tuple[str, ...] = ("on_demand", "spot", "reserved", "savings_plan", "prepaid")
"""How GPU capacity is paid for, in report order."""


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass
class CostComponent:
    """One priced line of a resource: quantity x price per period."""

    name: str
    unit: str
    period: BillingPeriod
    """Whether `quantity` counts per hour (instances) or per month (GiB stored)."""
    quantity: float | None
    price: float | None
    hours_per_month: int
    usage_based: bool = False
    unconfirmed: bool = False

    @property
    def monthly_cost(self) -> float | None:
        """Cost per month; None when the price or the quantity is unknown (a quantity of 0
        costs 0 whatever the price)."""
        if self.quantity == 0:
            return 0.0
        if self.price is None or self.quantity is None:
            return None
        per_period = self.quantity * self.price
        return per_period * self.hours_per_month if self.period == "hour" else per_period

    @property
    def hourly_cost(self) -> float | None:
        """Cost per hour; None when unknown."""
        monthly = self.monthly_cost
        return None if monthly is None else monthly / self.hours_per_month

    @property
    def unpriced(self) -> bool:
        """The price is unknown and matters (usage-based components have a price)."""
        return self.price is None and self.quantity != 0


@dataclass
class GpuCapacity:
    """GPU instances of one type paid for one way, with what on-demand would cost."""

    instance_type: str
    capacity: str
    """One of CAPACITIES."""
    count: float
    paid_hourly: float | None
    """What these instances cost per hour. Instances a reserved instance covers pay 0 here;
    the reserved instance itself is a slot paying its fee for `count` reserved."""
    on_demand_hourly: float | None
    """What running these instances on demand would cost per hour (0 for the reserved
    instance's own slot: it runs nothing)."""
    gpus_per_instance: float | None = None
    """GPUs on one instance of the type (a fraction for a vGPU slice); None when the type is
    no GPU type the catalog or the stack knows. Default None."""

    @property
    def unpriced(self) -> bool:
        """Instances are counted but what they cost is unknown."""
        return self.paid_hourly is None and self.count > 0


@dataclass(frozen=True)
class UnpricedCapacity:
    """Instances of one type in one resource whose price is unknown: what the budget cannot
    judge."""

    resource: str
    instance_type: str
    capacity: str
    """One of CAPACITIES (reserved: a reservation's own fee)."""
    instances: float
    gpus: float | None
    """GPUs on these instances; None for a type that is no known GPU type."""

    def line(self) -> str:
        """`4 on-demand instances (32 GPUs) of ecs.gn8v-8x.48xlarge in llm-ack-gpu-pool`."""
        what = ("reserved instance(s)" if self.capacity == "reserved"
                else f"{self.capacity.replace('_', '-')} instance(s)")
        gpus = f" ({self.gpus:g} GPUs)" if self.gpus else ""
        return f"{self.instances:g} {what}{gpus} of {self.instance_type} in {self.resource}"

    def to_json(self) -> dict[str, Any]:
        """The entry of `costDetails.unpricedCapacity`."""
        return {"resource": self.resource, "instanceType": self.instance_type,
                "capacity": self.capacity, "instances": self.instances, "gpus": self.gpus}


@dataclass
class ResourceCost:
    """The estimate of one planned resource."""

    name: str
    resource_type: str
    component: str
    """The building block it belongs to, e.g. `compute:GpuNodes llm-pretrain-gpu`."""
    components: list[CostComponent] = field(default_factory=list)
    free: bool = False
    note: str = ""
    gpu: list[GpuCapacity] = field(default_factory=list)

    @property
    def unpriced(self) -> bool:
        """Some part of the resource's cost is unknown."""
        return not self.free and (not self.components
                                  or any(c.unpriced for c in self.components))

    def _total(self, attribute: str) -> float | None:
        known = [getattr(c, attribute) for c in self.components]
        known = [value for value in known if value is not None]
        if self.free:
            return 0.0
        return sum(known) if known else None

    @property
    def monthly_cost(self) -> float | None:
        """Known monthly cost (None if nothing about it is known)."""
        return self._total("monthly_cost")

    @property
    def hourly_cost(self) -> float | None:
        """Known hourly cost (None if nothing about it is known)."""
        return self._total("hourly_cost")


@dataclass
class Estimate:
    """The estimate of a whole plan."""

    currency: str
    hours_per_month: int
    resources: list[ResourceCost]
    assumptions: dict[str, Any]

    @property
    def total_monthly_cost(self) -> float:
        """Sum of every known monthly cost (a lower bound when `unpriced` is not empty)."""
        return sum(r.monthly_cost or 0.0 for r in self.resources)

    @property
    def total_hourly_cost(self) -> float:
        """Sum of every known hourly cost."""
        return self.total_monthly_cost / self.hours_per_month

    @property
    def unpriced(self) -> list[ResourceCost]:
        """Resources with a part whose price is unknown."""
        return [r for r in self.resources if r.unpriced]

    def unpriced_capacity(self, *, gpus_only: bool = False) -> list[UnpricedCapacity]:
        """Instances (and reservations) counted in the plan whose price is unknown, per
        resource and type; with `gpus_only`, those of GPU types only."""
        return [UnpricedCapacity(r.name, slot.instance_type, slot.capacity, slot.count,
                                 None if slot.gpus_per_instance is None
                                 else slot.gpus_per_instance * slot.count)
                for r in self.resources for slot in r.gpu
                if slot.unpriced and not (gpus_only and slot.gpus_per_instance is None)]

    @property
    def usage_based(self) -> list[tuple[ResourceCost, CostComponent]]:
        """Components billed by use, not in the totals."""
        return [(r, c) for r in self.resources for c in r.components if c.usage_based]

    def by_component(self) -> dict[str, float | None]:
        """Known monthly cost per building block, in plan order (None: nothing known, e.g.
        only usage-based or unpriced resources)."""
        totals: dict[str, float | None] = {}
        for resource in self.resources:
            if resource.free:
                continue
            cost, so_far = resource.monthly_cost, totals.get(resource.component)
            totals[resource.component] = (so_far if cost is None else (so_far or 0.0) + cost)
        return totals

    def gpu_split(self) -> dict[str, float | None]:
        """Monthly GPU instance cost per capacity kind, what all on-demand would cost, and
        the saving (None where a price is unknown)."""
        months = self.hours_per_month
        slots = [slot for r in self.resources for slot in r.gpu]
        split: dict[str, float | None] = {}
        for capacity in CAPACITIES:
            paid = [s.paid_hourly for s in slots if s.capacity == capacity]
            split[capacity] = _total(paid, months)
        all_on_demand = _total([s.on_demand_hourly for s in slots], months)
        paid_total = [split[c] for c in CAPACITIES]
        saving = (None if all_on_demand is None or any(p is None for p in paid_total)
                  else all_on_demand - sum(p for p in paid_total if p is not None))
        return {**split, "all_on_demand": all_on_demand, "saving": saving}

    def summary(self) -> str:
        """`12,345 CNY/month`, or `≥ 12,345 CNY/month, 2 resources unpriced` with the
        instances among them (`4 on-demand instance(s) (32 GPUs) of ... without a price`),
        plus the number of usage-based charges left out."""
        total = f"{self.total_monthly_cost:,.0f} {self.currency}/month"
        parts = [f"≥ {total}, {len(self.unpriced)} resource(s) unpriced"
                 if self.unpriced else total]
        capacity = self.unpriced_capacity()
        if capacity:
            parts.append("without a price: " + ", ".join(c.line() for c in capacity))
        if self.usage_based:
            parts.append(f"plus {len(self.usage_based)} usage-based charge(s)")
        return "; ".join(parts)

    def details(self) -> dict[str, Any]:
        """Stack-wide figures Infracost's format has no place for (`costDetails` of
        `plan --json`): the text summary, what is unpriced, the GPU capacity split, the
        cost per building block and the assumptions. Costs are numbers (4 decimals)."""
        split = self.gpu_split()
        return {
            "currency": self.currency, "hoursPerMonth": self.hours_per_month,
            "complete": not self.unpriced, "summary": self.summary(),
            "unpricedResources": [r.name for r in self.unpriced],
            "unpricedCapacity": [c.to_json() for c in self.unpriced_capacity()],
            "usageBasedComponentCount": len(self.usage_based),
            "gpuMonthlyCost": {
                "onDemand": _round(split["on_demand"]), "spot": _round(split["spot"]),
                "reserved": _round(split["reserved"]),
                "savingsPlan": _round(split["savings_plan"]), "prepaid": _round(split["prepaid"]),
                "allOnDemand": _round(split["all_on_demand"]),
                "saving": _round(split["saving"])},
            "byComponent": [{"name": name, "monthlyCost": _round(cost)}
                            for name, cost in self.by_component().items()],
            "assumptions": self.assumptions,
        }


def _total(hourly: list[float | None], hours: float) -> float | None:
    """The sum of `hourly` prices over `hours`; None if any price is unknown."""
    known = [price for price in hourly if price is not None]
    return sum(known, 0.0) * hours if len(known) == len(hourly) else None
