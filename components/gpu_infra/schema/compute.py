"""The `fleet` section: which GPU instances run the workload, how many, how they are paid
for, and how an auto-scaling fleet grows and shrinks."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Literal

from pydantic import Field, model_validator

from gpu_infra.schema.base import StrictModel

InstanceType = str
"""An ECS instance type such as ecs.gn7i-c8g1.2xlarge."""
INSTANCE_TYPE_PATTERN = r"^ecs\.[a-z0-9-]+\.[a-z0-9]+$"

Capacity = Literal["on_demand", "spot", "prepaid"]
"""How fixed nodes are paid for: on_demand (PostPaid), spot (PostPaid + spot strategy) or
prepaid (PrePaid subscription)."""
SpotStrategy = Literal["SpotAsPriceGo", "SpotWithPriceLimit"]
"""Spot bidding: follow the market price, or cap it with `spot_price_limit`."""
PerformanceLevel = Literal["PL0", "PL1", "PL2", "PL3"]
PREPAID_PERIODS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, 48, 60)
"""`period` values ecs.Instance accepts with PrePaid."""
TargetMetric = Literal["CpuUtilization", "IntranetRx", "IntranetTx"]
"""ESS system metrics for target tracking on ECS scaling groups."""
RecurrenceType = Literal["Daily", "Weekly", "Monthly", "Cron"]
LAUNCH_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$"
"""ESS scheduled task launch time: UTC `YYYY-MM-DDThh:mmZ`."""
END_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$"
MAX_LAUNCH_DAYS_AHEAD = 90
"""ESS: a scheduled task's launch time may be at most 90 days after the task is created or
modified, otherwise it does not take effect (Auto Scaling "Create a scheduled task")."""
MAX_EVALUATION_COUNT = 100
"""Most consecutive periods an ESS alarm waits (our bound: the provider only asks for at
least 0; 100 periods of 900 s is 25 hours, longer is a mistake)."""
METRIC_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
"""Custom metric names we accept: a letter, then letters, digits, underscores (64 at most)."""


class ReservedInstances(StrictModel):
    """Reserved instance coupons (ecs.ReservedInstance) for the fleet's steady base."""

    count: int = Field(ge=1, le=1000)
    """Instances covered. Required."""
    offering_type: Literal["No Upfront", "Partial Upfront", "All Upfront"] = "No Upfront"
    """Payment option. Default No Upfront."""
    period_years: Literal[1, 3, 5] = 1
    """Term in years. Default 1."""
    scope: Literal["Region", "Zone"] = "Region"
    """Region-wide coupon, or zonal (tied to the fleet's first zone; it also reserves
    capacity there). Default Region."""


class CapacityGuarantee(StrictModel):
    """Guaranteed stock of a scarce GPU type in the fleet's first zone."""

    kind: Literal["elasticity_assurance", "capacity_reservation"] = "capacity_reservation"
    """elasticity_assurance (ecs.ElasticityAssurance, paid upfront for a term) or
    capacity_reservation (ecs.CapacityReservation, billed pay-as-you-go until released).
    Default capacity_reservation."""
    count: int = Field(ge=1, le=1000)
    """Instances guaranteed. Required."""
    period_months: int = Field(default=1, ge=1, le=60)
    """Term of an elasticity assurance, in months. Default 1; unused for reservations."""


class ReservedCapacityConfig(StrictModel):
    """Optional reserved capacity for the steady base of a fleet."""

    reserved_instances: ReservedInstances | None = None
    """Reserved instance coupons. Default none."""
    guarantee: CapacityGuarantee | None = None
    """Capacity guarantee. Default none."""


class FleetBase(StrictModel):
    """Settings fixed nodes and scaling fleets share."""

    image_id: str | None = None
    """Image of every node. Default: the newest Alibaba Cloud public Ubuntu 22.04 image,
    which has no GPU driver: then the user data must install the NVIDIA driver and CUDA, so
    set a custom or Marketplace GPU image here for production."""
    system_disk_gib: int = Field(default=200, ge=20, le=500)
    """ESSD system disk size in GiB. Default 200; 20-500 (the ESS limit)."""
    system_disk_performance_level: PerformanceLevel = "PL1"
    """ESSD performance level of the system disk. Default PL1."""
    spot_strategy: SpotStrategy = "SpotAsPriceGo"
    """Spot bidding for spot capacity. Default SpotAsPriceGo."""
    spot_price_limit: float | None = Field(default=None, gt=0)
    """Highest hourly price (CNY) per instance with SpotWithPriceLimit; required then, not
    allowed otherwise. Default none."""
    interruptible: bool = True
    """Whether the workload survives losing an instance at short notice. false forbids spot
    capacity (validator spot-non-interruptible). Default true."""
    reserved: ReservedCapacityConfig | None = None
    """Reserved capacity for the fleet's first instance type. Default none."""

    def _spot_problems(self, uses_spot: bool) -> list[str]:
        problems: list[str] = []
        if self.spot_strategy == "SpotWithPriceLimit" and self.spot_price_limit is None:
            problems.append("spot_price_limit: required with spot_strategy SpotWithPriceLimit")
        if self.spot_price_limit is not None and (
                self.spot_strategy != "SpotWithPriceLimit" or not uses_spot):
            problems.append("spot_price_limit: only used with spot capacity and spot_strategy "
                            "SpotWithPriceLimit")
        return problems


class TrainingFleet(FleetBase):
    """Fixed GPU nodes for training, all in the first zone of `network.zones`."""

    instance_type: InstanceType = Field(pattern=INSTANCE_TYPE_PATTERN)
    """ECS GPU instance type of every node, e.g. ecs.gn8v-8x.48xlarge. Required."""
    nodes: int = Field(default=1, ge=1, le=2000)
    """Number of nodes. Default 1."""
    capacity: Capacity = "on_demand"
    """on_demand, spot or prepaid. Default on_demand. spot_strategy and spot_price_limit
    force the replacement of existing nodes when changed."""
    prepaid_period: int = 1
    """Subscription length with prepaid capacity: 1-9, 12, 24, 36, 48 or 60. Default 1."""
    prepaid_period_unit: Literal["Week", "Month"] = "Month"
    """Unit of prepaid_period. Default Month."""
    erdma: Literal["auto", "on", "off"] = "auto"
    """eRDMA on the primary interface: auto (on where the family supports it), on (an
    ERROR on families without it) or off. Default auto."""
    placement: Literal["auto", "LowLatency", "Availability"] = "auto"
    """Deployment-set strategy: auto is LowLatency for several nodes of a family that
    supports it, Availability otherwise. Default auto."""
    interruptible: bool = False
    """Whether training survives losing a node (checkpointing and elastic restart).
    Default false: spot capacity is refused."""
    scale_in_from: int | None = Field(default=None, ge=0)
    """Step 1 of removing nodes in prod: nodes from this index on (node-<index> and above)
    lose their deletion protection, in an update of their own; step 2 lowers `nodes` to this
    number, which deletes them. At most `nodes`. Default none (every node protected in
    prod)."""

    @model_validator(mode="after")
    def _check_capacity(self) -> TrainingFleet:
        problems = self._spot_problems(self.capacity == "spot")
        if self.scale_in_from is not None and self.scale_in_from > self.nodes:
            problems.append(f"scale_in_from: {self.scale_in_from} is above nodes "
                            f"({self.nodes}); allowed 0 to {self.nodes}")
        if self.prepaid_period not in PREPAID_PERIODS:
            problems.append(f"prepaid_period: {self.prepaid_period} not allowed; allowed: "
                            f"{', '.join(map(str, PREPAID_PERIODS))}")
        if problems:
            raise ValueError("\n".join(problems))
        return self


class TargetTracking(StrictModel):
    """Keep a system metric near a target (ess.ScalingRule TargetTrackingScalingRule)."""

    metric: TargetMetric = "CpuUtilization"
    """ESS system metric. Default CpuUtilization."""
    target_value: float = Field(default=70, gt=0)
    """Target value (percent for CpuUtilization, so at most 100). Default 70."""
    disable_scale_in: bool = False
    """Only scale out on this rule. Default false."""
    warmup_seconds: int = Field(default=300, ge=0, le=86400)
    """Seconds before a new instance counts towards the metric. Default 300."""

    @model_validator(mode="after")
    def _check_target(self) -> TargetTracking:
        if self.metric == "CpuUtilization" and self.target_value > 100:
            raise ValueError(f"target_value: {self.target_value:g}% CPU can never be reached; "
                             "allowed above 0 up to 100")
        return self


class ScalingStep(StrictModel):
    """One step of a step scaling rule; bounds are relative to the alarm threshold."""

    lower: float | None = None
    """Lower bound (inclusive). Default none (no bound)."""
    upper: float | None = None
    """Upper bound (exclusive). Default none (no bound)."""
    adjustment: int
    """Instances to add (negative: remove). Required."""


class QueueScaling(StrictModel):
    """Step scaling on a custom CloudMonitor metric such as job-queue length: an ess.Alarm
    (metric_type custom) above `scale_out_threshold` triggers a StepScalingRule, and a queue
    at or below `scale_in_threshold` brings the group back to `min_size` (zero for batch)."""

    cloud_monitor_group_id: int | None = Field(default=None, ge=1)
    """CloudMonitor application group your job scheduler reports the metric to. Default:
    one is created for the fleet (its id is a stack output)."""
    metric_name: str = Field(default="job_queue_length", pattern=METRIC_NAME_PATTERN)
    """Custom metric name: a letter, then up to 63 letters, digits or underscores.
    Default job_queue_length."""
    scale_out_threshold: float = Field(default=1, ge=0)
    """Queue length at or above which the fleet grows (0 or more). Default 1."""
    steps: list[ScalingStep] = Field(
        default_factory=lambda: [ScalingStep(lower=0, upper=10, adjustment=1),
                                 ScalingStep(lower=10, upper=None, adjustment=4)],
        min_length=1)
    """Step adjustments. Default: +1 below 10 jobs over the threshold, +4 from there."""
    scale_in_threshold: float = Field(default=0, ge=0)
    """Queue length at or below which the fleet shrinks to min_size (0 or more, below
    scale_out_threshold). Default 0."""
    period_seconds: Literal[60, 120, 300, 900] = 60
    """Alarm period. Default 60."""
    evaluation_count: int = Field(default=3, ge=1, le=MAX_EVALUATION_COUNT)
    """Periods in a row before an alarm fires, 1 to 100. Default 3."""

    @model_validator(mode="after")
    def _check_alarms(self) -> QueueScaling:
        problems = step_problems(self.steps)
        if self.scale_in_threshold >= self.scale_out_threshold:
            problems.append(f"scale_in_threshold: {self.scale_in_threshold:g} must be below "
                            f"scale_out_threshold {self.scale_out_threshold:g}, or both alarms "
                            "fire at once")
        if problems:
            raise ValueError("\n".join(problems))
        return self


def step_problems(steps: list[ScalingStep]) -> list[str]:
    """The rules of ESS step adjustments (bounds relative to a `>=` alarm's threshold): each
    step's lower bound is below its upper one; in order of their bounds the steps meet
    without gaps or overlaps from 0 (or an open lower bound) to an open upper bound; every
    step adds instances."""
    problems = [f"steps[{i}].adjustment: {step.adjustment}; a step of the scale-out alarm "
                "adds at least 1 instance" for i, step in enumerate(steps)
                if step.adjustment < 1]
    for i, step in enumerate(steps):
        if step.lower is not None and step.upper is not None and step.lower >= step.upper:
            problems.append(f"steps[{i}].upper: {step.upper:g} is not above lower "
                            f"{step.lower:g}")
    if problems:
        return problems
    order = sorted(range(len(steps)), key=lambda i: -math.inf if steps[i].lower is None
                   else steps[i].lower)
    first, last = steps[order[0]], steps[order[-1]]
    if first.lower is not None and first.lower > 0:
        problems.append(f"steps[{order[0]}].lower: {first.lower:g}; the lowest step must "
                        "start at 0 (the threshold) or have no lower bound, else a queue "
                        "just over the threshold adds nobody")
    if last.upper is not None:
        problems.append(f"steps[{order[-1]}].upper: {last.upper:g}; the highest step must "
                        "have no upper bound, else a longer queue adds nobody")
    for below, above in pairwise(order):
        low, high = steps[below], steps[above]
        if low.upper is None or high.lower is None or low.upper != high.lower:
            problems.append(f"steps[{above}].lower: {_bound_text(high.lower)} must equal the "
                            f"upper bound {_bound_text(low.upper)} of steps[{below}]: steps "
                            "meet without gaps or overlaps, and only the highest is open "
                            "above")
    return problems


def _bound_text(bound: float | None) -> str:
    return "none" if bound is None else f"{bound:g}"


class ScheduledScaling(StrictModel):
    """A scheduled change of the group's sizes (ess.ScheduledTask)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,30}$")
    """Task name (2-31 lowercase letters, digits, hyphens). Required."""
    launch_time: str = Field(pattern=LAUNCH_TIME_PATTERN)
    """First run, UTC `YYYY-MM-DDThh:mmZ`, at most 90 days ahead. Required."""
    recurrence_type: RecurrenceType | None = None
    """Daily, Weekly, Monthly or Cron. Default none (runs once)."""
    recurrence_value: str | None = None
    """Recurrence (e.g. 1 for every day, a cron expression). Required with
    recurrence_type."""
    recurrence_end_time: str | None = Field(default=None, pattern=END_TIME_PATTERN)
    """Last repetition, UTC. Required with recurrence_type."""
    min_size: int | None = Field(default=None, ge=0, le=2000)
    """New minimum size. Default unchanged."""
    max_size: int | None = Field(default=None, ge=0, le=2000)
    """New maximum size. Default unchanged."""
    desired_size: int | None = Field(default=None, ge=0, le=2000)
    """New desired size. Default unchanged."""

    @model_validator(mode="after")
    def _check(self) -> ScheduledScaling:
        problems: list[str] = []
        recurrence = (self.recurrence_type, self.recurrence_value, self.recurrence_end_time)
        if any(value is not None for value in recurrence) and None in recurrence:
            problems.append("recurrence_type: recurrence_type, recurrence_value and "
                            "recurrence_end_time go together")
        if self.min_size is None and self.max_size is None and self.desired_size is None:
            problems.append("desired_size: set at least one of min_size, max_size, "
                            "desired_size")
        sizes = {"min_size": self.min_size, "desired_size": self.desired_size,
                 "max_size": self.max_size}
        given = [(name, size) for name, size in sizes.items() if size is not None]
        problems += [f"{above}: {high} is below {below} {low}" for (below, low), (above, high)
                     in pairwise(given) if high < low]
        problems += self._time_problems(datetime.now(UTC))
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _time_problems(self, now: datetime) -> list[str]:
        """Real dates; the launch within the next 90 days (ESS ignores a task set further
        ahead), and a schedule that still runs (one-off in the future, or a recurrence
        that ends after it starts and after now)."""
        launch = _utc_time(self.launch_time)
        if launch is None:
            return [f"launch_time: {self.launch_time} is not a date and time"]
        problems: list[str] = []
        if launch > now + timedelta(days=MAX_LAUNCH_DAYS_AHEAD):
            problems.append(f"launch_time: {self.launch_time} is more than "
                            f"{MAX_LAUNCH_DAYS_AHEAD} days ahead; ESS ignores such a task")
        end = _utc_time(self.recurrence_end_time) if self.recurrence_end_time else None
        if self.recurrence_end_time and end is None:
            problems.append(f"recurrence_end_time: {self.recurrence_end_time} is not a date "
                            "and time")
        elif end is not None and end <= launch:
            problems.append(f"recurrence_end_time: {self.recurrence_end_time} is not after "
                            f"launch_time {self.launch_time}")
        elif end is not None and end <= now:
            problems.append(f"recurrence_end_time: {self.recurrence_end_time} has passed; "
                            "the schedule never runs again (remove it)")
        elif self.recurrence_type is None and launch <= now:
            problems.append(f"launch_time: {self.launch_time} has passed and the task does not "
                            "recur, so it never runs (remove it)")
        return problems


def _utc_time(text: str) -> datetime | None:
    """`YYYY-MM-DDThh:mm[:ss]Z` as an aware UTC datetime, or None if no such moment."""
    for layout in ("%Y-%m-%dT%H:%MZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


class ScalingFleet(FleetBase):
    """An auto-scaling GPU fleet (inference, rendering) over the zones of the network."""

    instance_types: list[InstanceType] = Field(min_length=1, max_length=10)
    """Instance types the group may launch, in order of preference (each one is a spot
    pool). Required; at most 10 (ESS limit)."""
    min_size: int = Field(default=0, ge=0, le=2000)
    """Fewest instances; 0 lets a batch fleet scale to zero. Default 0."""
    max_size: int = Field(default=4, ge=0, le=2000)
    """Most instances. Default 4."""
    desired_size: int | None = Field(default=None, ge=0, le=2000)
    """Instances to keep when no rule acts. Default none (ESS keeps between min and max)."""
    multi_az_policy: Literal["COST_OPTIMIZED", "BALANCE"] = "COST_OPTIMIZED"
    """COST_OPTIMIZED (cheapest types first, needed for a spot mix) or BALANCE (even
    across zones, on-demand only). Default COST_OPTIMIZED."""
    on_demand_base_capacity: int = Field(default=0, ge=0, le=1000)
    """On-demand instances before any spot. Default 0."""
    on_demand_percentage_above_base: int = Field(default=100, ge=0, le=100)
    """Percent on-demand above the base; the rest is spot. Default 100 (no spot)."""
    spot_instance_pools: int = Field(default=2, ge=1, le=10)
    """Cheapest instance types spot capacity is spread over. Default 2."""
    spot_instance_remedy: bool = True
    """Replace spot instances when they get the reclaim notice. Default true."""
    target_tracking: TargetTracking | None = None
    """Target tracking on a system metric. Default none."""
    queue_scaling: QueueScaling | None = None
    """Step scaling on a custom queue-length metric. Default none."""
    schedules: list[ScheduledScaling] = []
    """Scheduled size changes. Default none."""
    drain_seconds: int | None = Field(default=600, ge=30, le=21600)
    """Scale-in lifecycle hook: seconds an instance may drain its work before release
    (30-21600). null: no hook. Default 600."""

    @property
    def uses_spot(self) -> bool:
        """Whether any capacity above the on-demand base may be spot."""
        return self.on_demand_percentage_above_base < 100

    @model_validator(mode="after")
    def _check_sizes(self) -> ScalingFleet:
        problems = self._spot_problems(self.uses_spot)
        if self.min_size > self.max_size:
            problems.append(f"min_size: {self.min_size} is above max_size {self.max_size}")
        if self.desired_size is not None and not (
                self.min_size <= self.desired_size <= self.max_size):
            problems.append(f"desired_size: {self.desired_size} is outside min_size "
                            f"{self.min_size} .. max_size {self.max_size}")
        if self.uses_spot and self.multi_az_policy != "COST_OPTIMIZED":
            problems.append("multi_az_policy: a spot mix (on_demand_percentage_above_base "
                            "below 100) needs COST_OPTIMIZED")
        if len(set(self.instance_types)) != len(self.instance_types):
            problems.append("instance_types: each type may be listed once")
        if self.spot_price_limit is not None and not re.fullmatch(
                r"\d+(\.\d{1,2})?", f"{self.spot_price_limit:g}"):
            problems.append("spot_price_limit: at most 2 decimals for scaling fleets")
        names = [schedule.name for schedule in self.schedules]
        if len(set(names)) != len(names):
            problems.append("schedules: each name may be used once")
        if problems:
            raise ValueError("\n".join(problems))
        return self
