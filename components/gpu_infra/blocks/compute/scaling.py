"""An auto-scaling GPU fleet: an ESS scaling group, its configuration and scaling rules."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.schema.compute import ScalingFleet

REMOVAL_POLICIES = ["OldestScalingConfiguration", "OldestInstance"]
"""Which instances go first on scale-in: those of an old configuration, then the oldest."""


class GpuScalingGroup(pulumi.ComponentResource):
    """An ESS scaling group over `config.instance_types` across `vswitch_ids` (zones).

    Capacity: `on_demand_base_capacity` on-demand instances, then
    `on_demand_percentage_above_base` percent on-demand and the rest spot over the
    `spot_instance_pools` cheapest types (COST_OPTIMIZED). The configuration uses a
    cloud_essd system disk: ESS rejects cloud_auto (ESSD AutoPL). Scaling: optional target
    tracking on a system metric, step scaling on a custom queue metric (ess.Alarm, metric
    type custom) with a scale-in alarm back to min_size, scheduled tasks, and a SCALE_IN
    lifecycle hook that gives instances `drain_seconds` to finish their work. Group
    deletion protection follows `conventions.deletion_protection`. The system disk is
    always encrypted, with `kms_key_id` when given. Without a configured CloudMonitor group,
    queue scaling creates one (`metric_group_id`) for the job scheduler to report to.

    Outputs: `scaling_group_id`, `scaling_configuration_id`, `scaling_rule_aris`,
    `metric_group_id` (or None).
    """

    TYPE = "gpu-infra:compute:GpuScalingGroup"
    group: alicloud.ess.ScalingGroup
    configuration: alicloud.ess.ScalingConfiguration
    rules: dict[str, alicloud.ess.ScalingRule]
    alarms: list[alicloud.ess.Alarm]
    scheduled_tasks: list[alicloud.ess.ScheduledTask]
    lifecycle_hook: alicloud.ess.LifecycleHook | None

    def __init__(self, name: str, *, config: ScalingFleet,
                 vswitch_ids: Sequence[pulumi.Input[str]],
                 security_group_ids: Sequence[pulumi.Input[str]],
                 image_id: pulumi.Input[str], conventions: Conventions,
                 key_name: pulumi.Input[str] | None = None,
                 role_name: pulumi.Input[str] | None = None,
                 user_data: pulumi.Input[str] | None = None,
                 data_disks: Sequence[alicloud.ess.ScalingConfigurationDataDiskArgs] = (),
                 kms_key_id: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.group = alicloud.ess.ScalingGroup(
            child_name(name, "asg"), scaling_group_name=child_name(name, "asg"),
            min_size=config.min_size, max_size=config.max_size,
            desired_capacity=config.desired_size, vswitch_ids=list(vswitch_ids),
            multi_az_policy=config.multi_az_policy,
            on_demand_base_capacity=config.on_demand_base_capacity,
            on_demand_percentage_above_base_capacity=config.on_demand_percentage_above_base,
            spot_instance_pools=config.spot_instance_pools if config.uses_spot else None,
            spot_instance_remedy=config.spot_instance_remedy if config.uses_spot else None,
            removal_policies=REMOVAL_POLICIES,
            group_deletion_protection=conventions.deletion_protection,
            tags=conventions.tags_for(child_name(name, "asg"), {FLEET_TAG_KEY: name}),
            opts=child)
        spot = config.uses_spot
        self.configuration = alicloud.ess.ScalingConfiguration(
            child_name(name, "config"), scaling_group_id=self.group.id,
            scaling_configuration_name=child_name(name, "config"),
            instance_types=list(config.instance_types), image_id=image_id,
            instance_name=child_name(name, "node"), security_group_ids=list(security_group_ids),
            key_name=key_name, role_name=role_name, user_data=user_data,
            internet_max_bandwidth_out=0, system_disk_category="cloud_essd",
            system_disk_size=config.system_disk_gib,
            system_disk_performance_level=config.system_disk_performance_level,
            system_disk_encrypted=True, system_disk_kms_key_id=kms_key_id,
            data_disks=list(data_disks) or None,
            spot_strategy=config.spot_strategy if spot else "NoSpot",
            spot_price_limits=[
                alicloud.ess.ScalingConfigurationSpotPriceLimitArgs(
                    instance_type=instance_type, price_limit=config.spot_price_limit)
                for instance_type in config.instance_types]
            if spot and config.spot_strategy == "SpotWithPriceLimit" else None,
            tags=conventions.tags_for(child_name(name, "node"), {FLEET_TAG_KEY: name}),
            active=True, enable=True, force_delete=True, opts=child)
        self.rules = {}
        self.alarms = []
        self._target_tracking(name, config, child)
        self.metric_group: alicloud.cms.MonitorGroup | None = None
        self._queue_scaling(name, config, conventions, child)
        self.scheduled_tasks = [
            alicloud.ess.ScheduledTask(
                child_name(name, f"schedule-{task.name}"),
                scheduled_task_name=child_name(name, task.name)[:40],
                scaling_group_id=self.group.id, launch_time=task.launch_time,
                recurrence_type=task.recurrence_type, recurrence_value=task.recurrence_value,
                recurrence_end_time=task.recurrence_end_time, min_value=task.min_size,
                max_value=task.max_size, desired_capacity=task.desired_size,
                task_enabled=True, opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[self.configuration]))
            for task in config.schedules]
        self.lifecycle_hook = None if config.drain_seconds is None else alicloud.ess.LifecycleHook(
            child_name(name, "drain"), name=child_name(name, "drain"),
            scaling_group_id=self.group.id, lifecycle_transition="SCALE_IN",
            heartbeat_timeout=config.drain_seconds, default_result="CONTINUE", opts=child)
        self.scaling_group_id: pulumi.Output[str] = self.group.id
        self.scaling_configuration_id: pulumi.Output[str] = self.configuration.id
        self.scaling_rule_aris = {key: rule.ari for key, rule in self.rules.items()}
        self.metric_group_id = self.metric_group.id if self.metric_group else None
        self.register_outputs({"scaling_group_id": self.scaling_group_id,
                               "scaling_configuration_id": self.scaling_configuration_id,
                               "scaling_rule_aris": self.scaling_rule_aris})

    def _target_tracking(self, name: str, config: ScalingFleet,
                         child: pulumi.ResourceOptions) -> None:
        tracking = config.target_tracking
        if tracking is None:
            return
        self.rules["target"] = alicloud.ess.ScalingRule(
            child_name(name, "target"), scaling_rule_name=child_name(name, "target"),
            scaling_group_id=self.group.id, scaling_rule_type="TargetTrackingScalingRule",
            metric_type="system", metric_name=tracking.metric,
            target_value=tracking.target_value, disable_scale_in=tracking.disable_scale_in,
            estimated_instance_warmup=tracking.warmup_seconds, opts=child)

    def _queue_scaling(self, name: str, config: ScalingFleet, conventions: Conventions,
                       child: pulumi.ResourceOptions) -> None:
        queue = config.queue_scaling
        if queue is None:
            return
        scale_out = alicloud.ess.ScalingRule(
            child_name(name, "queue-out"), scaling_rule_name=child_name(name, "queue-out"),
            scaling_group_id=self.group.id, scaling_rule_type="StepScalingRule",
            adjustment_type="QuantityChangeInCapacity",
            step_adjustments=[alicloud.ess.ScalingRuleStepAdjustmentArgs(
                metric_interval_lower_bound=_bound(step.lower),
                metric_interval_upper_bound=_bound(step.upper),
                scaling_adjustment=step.adjustment) for step in queue.steps],
            opts=child)
        scale_in = alicloud.ess.ScalingRule(
            child_name(name, "queue-in"), scaling_rule_name=child_name(name, "queue-in"),
            scaling_group_id=self.group.id, scaling_rule_type="SimpleScalingRule",
            adjustment_type="TotalCapacity", adjustment_value=config.min_size, opts=child)
        self.rules.update({"queue_out": scale_out, "queue_in": scale_in})
        group_id: pulumi.Input[int]
        if queue.cloud_monitor_group_id is None:
            self.metric_group = alicloud.cms.MonitorGroup(
                child_name(name, "metrics"), monitor_group_name=child_name(name, "metrics"),
                tags=conventions.tags_for(child_name(name, "metrics")), opts=child)
            group_id = self.metric_group.id.apply(int)  # ess.Alarm takes the id as an int
        else:
            group_id = queue.cloud_monitor_group_id
        for suffix, rule, operator, threshold in (
                ("queue-high", scale_out, ">=", queue.scale_out_threshold),
                ("queue-empty", scale_in, "<=", queue.scale_in_threshold)):
            self.alarms.append(alicloud.ess.Alarm(
                child_name(name, suffix), name=child_name(name, suffix),
                scaling_group_id=self.group.id, alarm_actions=[rule.ari],
                metric_type="custom", cloud_monitor_group_id=group_id,
                metric_name=queue.metric_name, period=queue.period_seconds,
                statistics="Average", comparison_operator=operator,
                threshold=f"{threshold:g}", evaluation_count=queue.evaluation_count,
                enable=True, opts=child))


def _bound(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"
