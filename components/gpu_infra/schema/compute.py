"""The `fleet` section: which GPU instances run the workload, how many, how they are paid
for, and how an auto-scaling fleet grows and shrinks."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from typing import Literal

from pydantic import Field, model_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.node import DriverConfig, ImageChoice
from gpu_infra.schema.problems import choice_problems
from gpu_infra_facts.allowed import (
    ASSURANCE_TERMS_MONTHS,
    ESS_MAX_INSTANCE_TYPES,
    ESS_SYSTEM_DISK_GIB,
    HEARTBEAT_TIMEOUT_SECONDS,
    MAX_EVALUATION_COUNT,
    MAX_LAUNCH_DAYS_AHEAD,
    MIN_INSTANCE_LIFETIME_DAYS,
    PREPAID_PERIODS,
    REFRESH_MAX_HEALTHY_PERCENT,
    REFRESH_MIN_HEALTHY_PERCENT,
    REFRESH_MULTI_AZ_POLICY,
    SPOT_PRICE_DECIMALS,
    DeploymentSetStrategy,
    EssAlarmPeriod,
    HealthCheckType,
    MultiAzPolicy,
    PerformanceLevel,
    PrepaidPeriodUnit,
    RecurrenceType,
    ReservedOffering,
    ReservedScope,
    ReservedTermYears,
    ScaleInMode,
    SpotStrategy,
    TargetMetric,
)

InstanceType = str
"""An ECS instance type such as ecs.gn7i-c8g1.2xlarge."""
INSTANCE_TYPE_PATTERN = r"^ecs\.[a-z0-9-]+\.[a-z0-9]+$"

Capacity = Literal["on_demand", "spot", "prepaid"]
"""How fixed nodes are paid for: on_demand (PostPaid), spot (PostPaid + spot strategy) or
prepaid (PrePaid subscription)."""
LAUNCH_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$"
"""ESS scheduled task launch time: UTC `YYYY-MM-DDThh:mmZ`."""
END_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$"
METRIC_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
"""Custom metric names we accept: a letter, then letters, digits, underscores (64 at most)."""


class ReservedInstances(StrictModel):
    """Reserved instance coupons (ecs.ReservedInstance) for the fleet's steady base."""

    count: int = Field(ge=1, le=1000)
    """Instances covered. Required."""
    offering_type: ReservedOffering = "No Upfront"
    """Payment option. Default No Upfront."""
    period_years: ReservedTermYears = 1
    """Term in years. Default 1."""
    scope: ReservedScope = "Region"
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
    period_months: int = 1
    """Term of an elasticity assurance, in months: 1-9, 12, 24, 36, 48 or 60 (whole years
    are bought as years). Default 1; unused for reservations."""

    @model_validator(mode="after")
    def _check_term(self) -> CapacityGuarantee:
        if self.period_months not in ASSURANCE_TERMS_MONTHS:
            raise ValueError(f"period_months: {self.period_months} not allowed; allowed: "
                             f"{', '.join(map(str, ASSURANCE_TERMS_MONTHS))}")
        return self


class ReservedCapacityConfig(StrictModel):
    """Optional reserved capacity for the steady base of a fleet."""

    reserved_instances: ReservedInstances | None = None
    """Reserved instance coupons. Default none."""
    guarantee: CapacityGuarantee | None = None
    """Capacity guarantee. Default none."""


class FleetBase(StrictModel):
    """Settings fixed nodes and scaling fleets share."""

    image: ImageChoice = ImageChoice()
    """Image of every node: an id, an exact custom-image name, or (default) the pinned public
    Ubuntu 22.04 image. A new public image never changes the plan; only an edit here does
    (it replaces each node's system disk)."""
    driver: DriverConfig = DriverConfig()
    """GPU driver route and pinned versions. Default: Alibaba's first-boot auto-install with
    the family's pinned driver, CUDA and cuDNN (vws families: set route grid or
    preinstalled)."""
    system_disk_gib: int = Field(default=200, ge=ESS_SYSTEM_DISK_GIB[0],
                                 le=ESS_SYSTEM_DISK_GIB[1])
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
        limit = self.spot_price_limit
        low = 10 ** -SPOT_PRICE_DECIMALS
        if limit is not None and (limit < low or round(limit, SPOT_PRICE_DECIMALS) != limit):
            problems.append(f"spot_price_limit: {limit:g} CNY/hour; at least {low:g}, with at "
                            f"most {SPOT_PRICE_DECIMALS} decimals (ECS SpotPriceLimit)")
        if self.spot_strategy == "SpotWithPriceLimit" and self.spot_price_limit is None:
            problems.append("spot_price_limit: required with spot_strategy SpotWithPriceLimit")
        if self.spot_price_limit is not None and (
                self.spot_strategy != "SpotWithPriceLimit" or not uses_spot):
            problems.append("spot_price_limit: only used with spot capacity and spot_strategy "
                            "SpotWithPriceLimit")
        return problems


class TrainingFleet(FleetBase):
    """GPU nodes for training, all in the first zone of `network.zones`: fixed nodes, and on
    spot capacity a scaling group of spot workers behind the on-demand ones."""

    instance_type: InstanceType = Field(pattern=INSTANCE_TYPE_PATTERN)
    """ECS GPU instance type of every node, e.g. ecs.gn8v-8x.48xlarge. Required."""
    nodes: int = Field(default=1, ge=1, le=2000)
    """Number of nodes. Default 1."""
    capacity: Capacity = "on_demand"
    """on_demand, spot or prepaid. Default on_demand. With spot, the nodes after the
    on-demand ones are spot workers in a scaling group (on_demand_nodes), whose scaling
    configuration takes spot_strategy and spot_price_limit (for the workers it launches
    next)."""
    on_demand_nodes: int | None = Field(default=None, ge=0, le=2000)
    """With spot capacity: N nodes (node-000 on) are fixed on-demand nodes; node 0 holds the
    elastic rendezvous (c10d, gpu-infra-torchrun), which must outlive any reclaim, and the
    job keeps running on at least max(1, N) nodes (`--nnodes N:nodes`). The other
    `nodes - N` are spot workers in an ESS scaling group that replaces a reclaimed one on its
    notice (spot_instance_remedy) and launches on-demand ones when spot runs out
    (compensate_with_on_demand); a replacement joins the running job. Default 1 with several
    nodes, 0 with one (the one node is then a spot worker whose replacement resumes the job
    from its checkpoint). At least 1 with several nodes; at most `nodes`; only with spot
    capacity. A change of N moves nodes between the fixed part and the group (replaced)."""
    prepaid_period: int = 1
    """Subscription length with prepaid capacity: 1-9, 12, 24, 36, 48 or 60. Default 1."""
    prepaid_period_unit: PrepaidPeriodUnit = "Month"
    """Unit of prepaid_period. Default Month."""
    erdma: Literal["auto", "on", "off"] = "auto"
    """eRDMA on the primary interface: auto (on where the family supports it), on (an
    ERROR on families without it) or off. Default auto."""
    jumbo_frames: bool = False
    """Jumbo frames on the nodes (`enable_jumbo_frame`) and an eRDMA interface MTU of 8500,
    which NCCL's LL128 protocol needs for full bandwidth; off: MTU 1400, the value eRDMA
    requires without jumbo frames (a wrong MTU corrupts data). Needs eRDMA (validator
    jumbo-frames-without-erdma). Choose it when the nodes are created: on running nodes only
    `enable_jumbo_frame` changes (in place) while their MTU stays what their bootstrap set
    (user data is ignored after creation, and cloud-init does not rerun it), so turning it
    off leaves MTU 8500 without jumbo frames until the nodes are rebuilt. Default false."""
    placement: Literal["auto", DeploymentSetStrategy] = "auto"
    """Deployment-set strategy: auto is LowLatency for several nodes of a family that
    supports it, Availability otherwise. Default auto."""
    interruptible: bool = False
    """Whether training survives losing a node (checkpointing and elastic restart).
    Default false: spot capacity is refused."""
    push_user_data: bool = False
    """Give this `pulumi up` the current bootstrap: node user data is otherwise ignored after
    creation (`ignoreChanges`), and Pulumi then uses the recorded value even for a node it
    replaces, so a node replaced for another reason (eRDMA, spot strategy, KMS, inline disks)
    would boot the bootstrap it was first created with. On, replaced nodes boot the current
    one, and every node whose user data differs is stopped and started (the provider's
    update; cloud-init does not run the scripts again on an existing instance). Set it for
    the update that replaces nodes, then remove it. Default false."""
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
        if self.on_demand_nodes is not None and self.capacity != "spot":
            problems.append(f"on_demand_nodes: only used with capacity spot (capacity is "
                            f"{self.capacity}: every node is already {self.capacity})")
        elif self.on_demand_nodes is not None and self.on_demand_nodes > self.nodes:
            problems.append(f"on_demand_nodes: {self.on_demand_nodes} is above nodes "
                            f"({self.nodes}); allowed 0 to {self.nodes}")
        elif self.on_demand_nodes == 0 and self.nodes > 1:
            problems.append(f"on_demand_nodes: 0 with {self.nodes} nodes leaves the elastic "
                            "rendezvous on a spot node that a reclaim takes away; allowed 1 to "
                            f"{self.nodes} (0 only with one node)")
        elif self.spot_workers > 0 and self.jumbo_frames:
            problems.append("jumbo_frames: the spot workers are an ESS scaling group, whose "
                            "configuration cannot enable jumbo frames (ecs.Instance only); "
                            "turn it off, or use capacity on_demand or prepaid")
        if self.spot_price_limit is not None and self.spot_workers > 0 and not re.fullmatch(
                r"\d+(\.\d{1,2})?", f"{self.spot_price_limit:g}"):
            problems.append("spot_price_limit: at most 2 decimals for the spot workers' "
                            "scaling group (ESS spot_price_limits)")
        problems += choice_problems("prepaid_period", self.prepaid_period, PREPAID_PERIODS)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    @property
    def on_demand_count(self) -> int:
        """Nodes paid on demand at the front of a spot fleet (`on_demand_nodes`, default 1
        with several nodes, 0 with one); 0 for other capacities (nothing is reclaimed)."""
        if self.capacity != "spot":
            return 0
        if self.on_demand_nodes is not None:
            return self.on_demand_nodes
        return 1 if self.nodes > 1 else 0

    @property
    def spot_workers(self) -> int:
        """Nodes in the spot scaling group (every node after the on-demand ones of a spot
        fleet); 0 for other capacities."""
        return self.nodes - self.on_demand_count if self.capacity == "spot" else 0

    def spot_group(self) -> ScalingFleet:
        """The spot workers as a scaling fleet: `spot_workers` instances of `instance_type`
        (one spot pool), all spot above no on-demand base, replaced on their reclaim notice
        (spot_instance_remedy) and made up with on-demand instances when spot stock or the
        price limit cannot (compensate_with_on_demand), COST_OPTIMIZED (ESS mixes spot only
        under it), ECS health checks, no drain (a reclaim leaves through the notice) and no
        refresh (a new configuration reaches replacements). Sources: pulumi-alicloud
        ess.ScalingGroup docstrings (spot_instance_remedy: "replace spot instances with newly
        created spot/onDemand instance when receive a spot recycling message";
        compensate_with_on_demand: only with multi_az_policy COST_OPTIMIZED)."""
        size = self.spot_workers
        return ScalingFleet(
            instance_types=[self.instance_type], min_size=size, max_size=size,
            desired_size=size, multi_az_policy="COST_OPTIMIZED", on_demand_base_capacity=0,
            on_demand_percentage_above_base=0, spot_instance_pools=1,
            spot_instance_remedy=True, compensate_with_on_demand=True, health_checks=["ECS"],
            drain_seconds=None, refresh=RollingRefresh(enabled=False), image=self.image,
            driver=self.driver, system_disk_gib=self.system_disk_gib,
            system_disk_performance_level=self.system_disk_performance_level,
            spot_strategy=self.spot_strategy, spot_price_limit=self.spot_price_limit,
            interruptible=True)

    @property
    def fixed_nodes(self) -> int:
        """Fixed nodes (ecs.Instance): every node but the spot workers."""
        return self.nodes - self.spot_workers

    @property
    def min_nodes(self) -> int:
        """The fewest nodes an elastic job runs on: all of them unless spot, else the
        on-demand ones, at least one (torchrun `--nnodes MIN:nodes`)."""
        return max(1, self.on_demand_count) if self.capacity == "spot" else self.nodes


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


class GpuScaling(StrictModel):
    """Scaling on the fleet's average GPU utilisation: an ess.Alarm on the system metric
    GpuUtilizationAgent (what the CloudMonitor agent on every node reports; ESS target
    tracking does not offer a GPU metric) at or above `scale_out_at` percent for
    `evaluation_count` periods grows the fleet by `grow_percent` of its capacity (at least
    one instance); at or below `scale_in_at` for `scale_in_evaluation_count` periods it
    shrinks by `shrink_percent` (at least one), never past min_size or max_size."""

    scale_out_at: float = Field(default=70, gt=0, le=100)
    """Average GPU utilisation (percent) at or above which the fleet grows. Default 70."""
    scale_in_at: float = Field(default=30, ge=0, lt=100)
    """Average GPU utilisation (percent) at or below which it shrinks. Default 30; must be
    below scale_out_at."""
    grow_percent: int = Field(default=25, ge=1, le=100)
    """Percent of the capacity added per firing (at least one instance). Default 25."""
    shrink_percent: int = Field(default=10, ge=1, le=100)
    """Percent of the capacity removed per firing (at least one instance). Default 10."""
    warmup_seconds: int = Field(default=600, ge=0, le=86400)
    """Seconds a new instance needs before it counts (driver, model load). Default 600."""
    period_seconds: EssAlarmPeriod = 60
    """Alarm period. Default 60."""
    evaluation_count: int = Field(default=3, ge=1, le=MAX_EVALUATION_COUNT)
    """Periods in a row at or above scale_out_at before the fleet grows. Default 3."""
    scale_in_evaluation_count: int = Field(default=15, ge=1, le=MAX_EVALUATION_COUNT)
    """Periods in a row at or below scale_in_at before it shrinks. Default 15 (longer than
    scale-out: hysteresis)."""

    @model_validator(mode="after")
    def _check_thresholds(self) -> GpuScaling:
        if self.scale_in_at >= self.scale_out_at:
            raise ValueError(f"scale_in_at: {self.scale_in_at:g}% must be below scale_out_at "
                             f"{self.scale_out_at:g}% (else the fleet grows and shrinks at "
                             "the same utilisation)")
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
    """Scaling on a custom CloudMonitor metric: the backlog of the fleet's work queue (pending
    requests, or render jobs queued plus running), published every minute with
    `gpu-infra publish-queue-metric` (or PutCustomMetric) under the `fleet` dimension.

    Scale-out: an ess.Alarm at or above `scale_out_threshold` for `evaluation_count`
    periods runs a StepScalingRule whose steps grow with the backlog (sized by
    `jobs_per_instance`, or `steps`). Scale-in: at or below `scale_in_threshold` for
    `scale_in_evaluation_count` periods, a StepScalingRule removes `scale_in_percent` of the
    capacity (at least one instance) per firing, never below min_size, so a fleet that
    keeps up (its queue near empty while busy) shrinks gradually instead of collapsing to
    min_size; the gap between the thresholds and the longer scale-in window keep it from
    oscillating. A CloudMonitor rule alerts the contacts when the metric stops arriving
    for `missing_data_minutes` (without data neither alarm fires and the fleet keeps its
    size and its bill)."""

    cloud_monitor_group_id: int | None = Field(default=None, ge=1)
    """CloudMonitor application group your publisher reports the metric to. Default: one is
    created for the fleet (its id is the stack output `metric_group_id`)."""
    metric_name: str = Field(default="job_queue_length", pattern=METRIC_NAME_PATTERN)
    """Custom metric name: a letter, then up to 63 letters, digits or underscores.
    Default job_queue_length."""
    scale_out_threshold: float = Field(default=1, ge=0)
    """Backlog at or above which the fleet grows. Default 1."""
    jobs_per_instance: float = Field(default=1, gt=0)
    """Backlog one instance works off in about one scaling period; sizes the derived
    scale-out steps: a backlog over the threshold below 1x this adds 1 instance, 1-2x adds 2,
    2-4x adds 4, from 4x adds 8 (each capped at max_size - min_size). Default 1."""
    steps: list[ScalingStep] | None = Field(default=None, min_length=1)
    """Explicit step adjustments (bounds relative to the threshold), replacing the derived
    ones. Default none (derived from jobs_per_instance)."""
    warmup_seconds: int = Field(default=600, ge=0, le=86400)
    """Seconds a new instance needs before it takes work (GPU driver, model load); the
    scale-out rule does not count it as capacity before that. Default 600."""
    scale_in_threshold: float = Field(default=0, ge=0)
    """Backlog at or below which the fleet shrinks. Default 0; must be below
    scale_out_threshold."""
    scale_in_percent: int | None = Field(default=None, ge=1, le=100)
    """Percent of the capacity removed each time the scale-in alarm fires (at least one
    instance). Default by layout: 25 for inference (an empty queue means keeping up, not
    idle), 100 for rendering (its backlog counts running jobs, so 0 means idle)."""
    period_seconds: EssAlarmPeriod = 60
    """Alarm period. Default 60."""
    evaluation_count: int = Field(default=3, ge=1, le=MAX_EVALUATION_COUNT)
    """Periods in a row at or above the threshold before the fleet grows, 1 to 100.
    Default 3."""
    scale_in_evaluation_count: int = Field(default=10, ge=1, le=MAX_EVALUATION_COUNT)
    """Periods in a row at or below scale_in_threshold before the fleet shrinks, 1 to 100.
    Default 10 (longer than scale-out: hysteresis)."""
    missing_data_minutes: int | None = Field(default=15, ge=5, le=1440)
    """Alert the contacts when no value arrived for this many minutes. Default 15; null: no
    alert."""
    publisher: Literal["stack", "external"] | None = None
    """Who publishes the metric. `stack`: the stack creates the fleet's job queue (MNS
    `<fleet>-jobs`, stack output `job_queue`; one message per job, received by the node that
    runs it and deleted when it is done) and a Function Compute function that puts the
    queue's backlog (waiting + running + delayed) as the metric every period. `external`:
    you publish it (`gpu-infra publish-queue-metric`, your serving layer). Default by
    layout: stack for rendering, external for inference (its backlog is the model servers'
    pending requests, which only they know)."""
    job_timeout_seconds: int = Field(default=1800, ge=60, le=43200)
    """With the stack's publisher: how long a received job stays invisible to other nodes
    (the queue's visibility timeout); a node working longer renews it
    (ChangeMessageVisibility), a node that dies gives the job back after it. Default 1800;
    60 to 43200 (the MNS maximum)."""

    def scale_out_steps(self, max_adjustment: int) -> list[ScalingStep]:
        """`steps`, else the doubling bands sized by jobs_per_instance, capped at
        `max_adjustment` instances (bands past the cap merge into the last)."""
        if self.steps is not None:
            return list(self.steps)
        cap = max(max_adjustment, 1)
        bands: list[ScalingStep] = []
        lower, width = 0.0, self.jobs_per_instance
        for adjustment in (1, 2, 4, 8):
            step = min(adjustment, cap)
            last = step == cap or adjustment == 8
            bands.append(ScalingStep(lower=lower, upper=None if last else lower + width,
                                     adjustment=step))
            if last:
                break
            lower, width = lower + width, width * 2 if adjustment > 1 else width
        return bands

    @model_validator(mode="after")
    def _check_alarms(self) -> QueueScaling:
        problems = step_problems(self.steps) if self.steps is not None else []
        if self.scale_in_threshold >= self.scale_out_threshold:
            problems.append(f"scale_in_threshold: {self.scale_in_threshold:g} must be below "
                            f"scale_out_threshold {self.scale_out_threshold:g} (else the "
                            "fleet grows and shrinks on the same backlog)")
        if problems:
            raise ValueError("\n".join(problems))
        return self


def step_problems(steps: list[ScalingStep]) -> list[str]:
    """Problems of a scale-out alarm's steps (bounds relative to its `>=` threshold), so that
    every queue length over the threshold picks exactly one step: each step's lower bound
    is below its upper one; in order of their bounds the steps meet without gaps or
    overlaps from 0 (or an open lower bound) to an open upper bound; every step adds
    instances. These are the step-adjustment rules AWS documents for step scaling, which
    ESS's StepScalingRule mirrors (no ESS page states them; UNCONFIRMED there)."""
    problems = [f"steps[{i}].adjustment: {step.adjustment}; a step of the scale-out alarm "
                "adds at least 1 instance" for i, step in enumerate(steps)
                if step.adjustment < 1]
    for i, step in enumerate(steps):
        if step.lower is not None and step.upper is not None and step.lower >= step.upper:
            problems.append(f"steps[{i}].upper: {step.upper:g} is not above lower "
                            f"{step.lower:g}")
    if problems:
        return problems
    def lower_of(index: int) -> float:
        lower = steps[index].lower
        return -math.inf if lower is None else lower

    order = sorted(range(len(steps)), key=lower_of)
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


class RollingRefresh(StrictModel):
    """Roll running instances onto a changed configuration (image, user data, instance
    types, disks) with an ess.InstanceRefresh started by the `pulumi up` that makes the
    change. ESS replaces instances in batches: it launches up to
    `max_healthy_percent - 100` percent extra capacity, then removes old instances while at
    least `min_healthy_percent` of the capacity stays healthy, so a batch is about
    `100 - min_healthy_percent` percent (at least one instance); at `checkpoint_percent`
    new instances it pauses `pause_minutes` so you can watch error rates (cancel in the
    console to stop). ESS refreshes only groups with multi_az_policy PRIORITY and
    scale_in_mode release; other fleets pick up a change as instances are replaced
    (`max_instance_lifetime_days`, spot reclaims, scaling)."""

    enabled: bool | None = None
    """Default: on where ESS supports it (multi_az_policy PRIORITY, scale_in_mode release,
    min_size at least 1); true elsewhere is an error."""
    min_healthy_percent: int = Field(default=80, ge=REFRESH_MIN_HEALTHY_PERCENT[0],
                                     le=REFRESH_MIN_HEALTHY_PERCENT[1])
    """Capacity kept healthy during the refresh, percent. Default 80 (the ESS default)."""
    max_healthy_percent: int = Field(default=120, ge=REFRESH_MAX_HEALTHY_PERCENT[0],
                                     le=REFRESH_MAX_HEALTHY_PERCENT[1])
    """Capacity allowed during the refresh, percent (new instances first). Default 120."""
    checkpoint_percent: int | None = Field(default=50, ge=1, le=99)
    """Pause when this percent of instances is new. Default 50; null: no pause."""
    pause_minutes: int = Field(default=10, ge=1, le=1440)
    """Length of the checkpoint pause in minutes. Default 10."""


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
        problems += self._time_problems(datetime.now(timezone.utc))
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
            return datetime.strptime(text, layout).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


class ScalingFleet(FleetBase):
    """An auto-scaling GPU fleet (inference, rendering) over the zones of the network."""

    instance_types: list[InstanceType] = Field(min_length=1, max_length=ESS_MAX_INSTANCE_TYPES)
    """Instance types the group may launch, in order of preference (each one is a spot
    pool). Required; at most 10 (ESS limit)."""
    min_size: int = Field(default=0, ge=0, le=2000)
    """Fewest instances; 0 lets a batch fleet scale to zero. Default 0."""
    max_size: int = Field(default=4, ge=0, le=2000)
    """Most instances. Default 4."""
    desired_size: int | None = Field(default=None, ge=0, le=2000)
    """Instances to keep when no rule acts. Default none (ESS keeps between min and max)."""
    typical_size: int | None = Field(default=None, ge=0, le=2000)
    """Instances the fleet usually runs, for the cost estimate only (it launches nothing):
    the estimate prices the fleet at this size, between min_size and max_size. Default
    none: the estimate uses desired_size, else min_size."""
    multi_az_policy: MultiAzPolicy = "COST_OPTIMIZED"
    """COST_OPTIMIZED (cheapest types first, needed for a spot mix), BALANCE (even across
    zones) or PRIORITY (zones and types in the order given; the only policy ESS can
    refresh). BALANCE and PRIORITY are on-demand only. Default COST_OPTIMIZED."""
    on_demand_base_capacity: int = Field(default=0, ge=0, le=1000)
    """On-demand instances before any spot. Default 0."""
    on_demand_percentage_above_base: int = Field(default=100, ge=0, le=100)
    """Percent on-demand above the base; the rest is spot. Default 100 (no spot)."""
    spot_instance_pools: int = Field(default=2, ge=1, le=10)
    """Cheapest instance types spot capacity is spread over. Default 2."""
    spot_instance_remedy: bool = True
    """Replace spot instances when they get the reclaim notice. Default true."""
    compensate_with_on_demand: bool = True
    """Launch on-demand instances when spot stock or price cannot meet the capacity (spot
    mixes only). Default true: a fleet short of spot still serves, at on-demand price."""
    health_checks: list[HealthCheckType] | None = Field(default=None, min_length=1)
    """What makes ESS replace an instance: ECS (the instance is stopped or failed) and
    LOAD_BALANCER (it fails the load balancer's health check). Default: both behind a load
    balancer (inference), ECS otherwise."""
    scale_in_mode: ScaleInMode = "release"
    """release deletes scaled-in instances; recycle (ESS economical mode, a warm pool) stops
    them and starts them again on the next scale-out, so that skips the boot and driver
    install while billing only their disks. recycle cannot be refreshed. Default release."""
    max_instance_lifetime_days: int | None = Field(default=None, ge=MIN_INSTANCE_LIFETIME_DAYS,
                                                   le=365)
    """Replace every instance after this many days (ESS max_instance_lifetime), so fleets
    that cannot be refreshed pick up configuration changes. Default none."""
    refresh: RollingRefresh = RollingRefresh()
    """Rolling refresh after a configuration change. Default: on where ESS supports it."""
    target_tracking: TargetTracking | None = None
    """Target tracking on a system metric. Default none."""
    queue_scaling: QueueScaling | None = None
    """Step scaling on a custom queue-length metric. Default none."""
    gpu_scaling: GpuScaling | None = None
    """Step scaling on the fleet's average GPU utilisation. Default none."""
    schedules: list[ScheduledScaling] = []
    """Scheduled size changes. Default none."""
    drain_seconds: int | None = Field(default=600, ge=HEARTBEAT_TIMEOUT_SECONDS[0],
                                      le=HEARTBEAT_TIMEOUT_SECONDS[1])
    """Scale-in lifecycle hook: seconds an instance may drain its work before release
    (30-21600). null: no hook. Default 600."""

    @property
    def uses_spot(self) -> bool:
        """Whether any capacity above the on-demand base may be spot."""
        return self.on_demand_percentage_above_base < 100

    @property
    def refresh_supported(self) -> bool:
        """Whether ESS can refresh this group (multi-AZ policy PRIORITY, instances released
        on scale-in, at least one instance to refresh)."""
        return (self.multi_az_policy == REFRESH_MULTI_AZ_POLICY
                and self.scale_in_mode == "release" and self.min_size >= 1)

    @property
    def refreshes(self) -> bool:
        """Whether a configuration change starts a rolling refresh."""
        enabled = self.refresh.enabled
        return self.refresh_supported if enabled is None else enabled

    @model_validator(mode="after")
    def _check_sizes(self) -> ScalingFleet:
        problems = self._spot_problems(self.uses_spot)
        room = self.max_size - self.min_size
        steps = self.queue_scaling.steps if self.queue_scaling else None
        problems += [f"queue_scaling.steps[{index}].adjustment: {step.adjustment} instances; a "
                     f"step adds at most max_size - min_size = {room}"
                     for index, step in enumerate(steps or ()) if step.adjustment > max(room, 1)]
        if self.min_size > self.max_size:
            problems.append(f"min_size: {self.min_size} is above max_size {self.max_size}")
        if self.desired_size is not None and not (
                self.min_size <= self.desired_size <= self.max_size):
            problems.append(f"desired_size: {self.desired_size} is outside min_size "
                            f"{self.min_size} .. max_size {self.max_size}")
        if self.typical_size is not None and not (
                self.min_size <= self.typical_size <= self.max_size):
            problems.append(f"typical_size: {self.typical_size} is outside min_size "
                            f"{self.min_size} .. max_size {self.max_size}")
        if self.uses_spot and self.multi_az_policy != "COST_OPTIMIZED":
            problems.append("multi_az_policy: a spot mix (on_demand_percentage_above_base "
                            "below 100) needs COST_OPTIMIZED")
        if len(set(self.instance_types)) != len(self.instance_types):
            problems.append("instance_types: each type may be listed once")
        if self.spot_price_limit is not None and not re.fullmatch(
                r"\d+(\.\d{1,2})?", f"{self.spot_price_limit:g}"):
            problems.append("spot_price_limit: at most 2 decimals for scaling fleets")
        if self.refresh.enabled and not self.refresh_supported:
            problems.append("refresh.enabled: ESS refreshes only groups with multi_az_policy "
                            "PRIORITY, scale_in_mode release and min_size 1 or more; use "
                            "max_instance_lifetime_days to renew other fleets")
        names = [schedule.name for schedule in self.schedules]
        if len(set(names)) != len(names):
            problems.append("schedules: each name may be used once")
        if problems:
            raise ValueError("\n".join(problems))
        return self
