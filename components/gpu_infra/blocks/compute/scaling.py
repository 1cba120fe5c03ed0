"""An auto-scaling GPU fleet: an ESS scaling group, its configuration and scaling rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import drain_command
from gpu_infra.blocks.compute.fleet_ops import (
    account_id,
    drain_parameters,
    drain_role,
    missing_metric_alarm,
    node_permissions,
    scaling_error_notice,
)
from gpu_infra.blocks.compute.queue_publisher import QueueMetricPublisher
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.blocks.logs import LogTarget
from gpu_infra.schema.compute import ScalingFleet
from gpu_infra_facts.allowed import GPU_UTILIZATION_METRIC, HealthCheckType
from gpu_infra_facts.cloudmonitor import FLEET_DIMENSION
from gpu_infra_facts.lifecycle import DRAIN_MARGIN_SECONDS, oos_template_arn

UserDataFor = Callable[[pulumi.Output[str], pulumi.Output[str] | None], pulumi.Input[str]]
"""User data made from the group's id and its readiness hook's id (None without a hook)."""
REMOVAL_POLICIES = ["OldestScalingConfiguration", "OldestInstance"]
"""Which instances go first on scale-in: those of an old configuration, then the oldest."""


class GpuScalingGroup(pulumi.ComponentResource):
    """An ESS scaling group over `config.instance_types` across `vswitch_ids` (zones).

    Capacity: `on_demand_base_capacity` on-demand instances, then
    `on_demand_percentage_above_base` percent on-demand and the rest spot over the
    `spot_instance_pools` cheapest types (COST_OPTIMIZED), on demand when spot runs out
    (`compensate_with_on_demand`). The configuration uses a cloud_essd system disk: ESS
    rejects cloud_auto (ESSD AutoPL); the system disk is always encrypted, with
    `kms_key_id` when given.

    Readiness: with `readiness_seconds`, a SCALE_OUT lifecycle hook (default result ABANDON)
    holds each new instance until its bootstrap's health check completes the action.

    Healing: ESS replaces instances failing `health_check_types` (ECS; LOAD_BALANCER
    behind a load balancer), spot instances on their reclaim notice, and every instance
    after `max_instance_lifetime_days`; a configuration change starts an ess.InstanceRefresh
    where the group supports it (`config.refreshes`). Scale-out/in failures of the group go
    to CloudMonitor (ess.Notification).

    Scaling: target tracking on a system metric, GPU scaling (alarms on the group's average
    GPU utilisation run percent step rules), queue scaling (steps sized to the backlog
    out, `scale_in_percent` of the capacity in, and an alert to `contact_group` when the
    metric stops arriving; with `publishes_queue_metric`, the job queue and the function
    that publishes its backlog, QueueMetricPublisher), scheduled tasks. Scale-in: a
    SCALE_IN lifecycle hook gives the leaving instances `drain_seconds`, in which OOS runs
    the drain on each of them (`drain_ports`: the service ports whose connections are
    requests in flight; `hands_back_jobs`: unfinished jobs go back to the stack's job queue
    at once, through the nodes' gpu_infra_queue.py) and answers the action when all have
    returned (fleet_ops). With
    `role_name`, the node role may publish the queue metric and take the fleet's jobs (and
    nothing else). Without a
    configured CloudMonitor group, queue scaling creates one (`metric_group_id`). Group
    deletion protection follows `conventions.deletion_protection`.

    Outputs: `scaling_group_id`, `scaling_configuration_id`, `scaling_rule_aris`,
    `metric_group_id` and `job_queue_name` (or None).
    """

    TYPE = "gpu-infra:compute:GpuScalingGroup"
    group: alicloud.ess.ScalingGroup
    configuration: alicloud.ess.ScalingConfiguration
    rules: dict[str, alicloud.ess.ScalingRule]
    alarms: list[alicloud.ess.Alarm]
    scheduled_tasks: list[alicloud.ess.ScheduledTask]
    lifecycle_hook: alicloud.ess.LifecycleHook | None
    drain_role: alicloud.ram.Role | None
    refresh: alicloud.ess.InstanceRefresh | None
    missing_data_alarm: alicloud.cloudmonitor.ServiceMetricAlarmRule | None
    publisher: QueueMetricPublisher | None

    def __init__(self, name: str, *, config: ScalingFleet,
                 vswitch_ids: Sequence[pulumi.Input[str]],
                 security_group_ids: Sequence[pulumi.Input[str]],
                 image_id: pulumi.Input[str], conventions: Conventions,
                 key_name: pulumi.Input[str] | None = None,
                 role_name: pulumi.Input[str] | None = None,
                 user_data: pulumi.Input[str] | UserDataFor | None = None,
                 data_disks: Sequence[alicloud.ess.ScalingConfigurationDataDiskArgs] = (),
                 kms_key_id: pulumi.Input[str] | None = None,
                 health_check_types: Sequence[HealthCheckType] = ("ECS",),
                 scale_in_percent: int = 25,
                 contact_group: pulumi.Input[str] | None = None,
                 readiness_seconds: int | None = None,
                 publishes_queue_metric: bool = False, drain_ports: Sequence[int] = (),
                 hands_back_jobs: bool = False,
                 resource_group_id: pulumi.Input[str] | None = None,
                 publisher_logs: LogTarget | None = None,
                 dead_letter_after: int | None = None,
                 fleet_tag: str | None = None, erdma: bool = False,
                 opts: pulumi.ResourceOptions | None = None):
        """`health_check_types` and `scale_in_percent`: the layout's effective values
        (schema defaults by layout); `contact_group`: who hears of a missing queue metric.
        `readiness_seconds`: hold each new instance in a SCALE_OUT lifecycle hook until its
        bootstrap completes the action (CONTINUE healthy, ABANDON unhealthy), abandoning it
        after that many seconds (30-21600); None: no readiness hook. A callable `user_data`
        gets the group's and the readiness hook's ids. `resource_group_id`: the resource
        group the scaling group and its instances go into (what scopes the stack's event
        rules to them); None: the account's default one. `publishes_queue_metric`: the
        stack publishes the queue metric from its job queue (the layout's effective
        `queue_scaling.publisher`); `publisher_logs`: where the publisher's logs go (default
        None: nowhere); `dead_letter_after`: receives of one job before the job queue moves
        it to its dead-letter queue (default None: no dead-letter queue). `fleet_tag`: the
        GpuFleet tag of the group and its instances (default `name`). `erdma`: the
        instances' primary interface in HighPerformance mode (eRDMA), with the security
        groups on it (ESS takes them there, not beside NetworkInterfaces; default off)."""
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        spot = config.uses_spot
        fleet_tag = fleet_tag or name
        lifetime = config.max_instance_lifetime_days
        self.group = alicloud.ess.ScalingGroup(
            child_name(name, "asg"), scaling_group_name=child_name(name, "asg"),
            min_size=config.min_size, max_size=config.max_size,
            desired_capacity=config.desired_size, vswitch_ids=list(vswitch_ids),
            multi_az_policy=config.multi_az_policy,
            on_demand_base_capacity=config.on_demand_base_capacity,
            on_demand_percentage_above_base_capacity=config.on_demand_percentage_above_base,
            spot_instance_pools=config.spot_instance_pools if spot else None,
            spot_instance_remedy=config.spot_instance_remedy if spot else None,
            compensate_with_on_demand=config.compensate_with_on_demand if spot else None,
            health_check_types=list(health_check_types),
            scaling_policy=config.scale_in_mode,
            max_instance_lifetime=lifetime * 86400 if lifetime else None,
            removal_policies=REMOVAL_POLICIES,
            group_deletion_protection=conventions.deletion_protection,
            resource_group_id=resource_group_id,
            tags=conventions.tags_for(child_name(name, "asg"), {FLEET_TAG_KEY: fleet_tag}),
            opts=child)
        self.readiness_hook: alicloud.ess.LifecycleHook | None = None
        if readiness_seconds is not None:
            self.readiness_hook = alicloud.ess.LifecycleHook(
                child_name(name, "ready"), name=child_name(name, "ready"),
                scaling_group_id=self.group.id, lifecycle_transition="SCALE_OUT",
                heartbeat_timeout=readiness_seconds, default_result="ABANDON", opts=child)
        if callable(user_data):
            user_data = user_data(self.group.id,
                                  self.readiness_hook.id if self.readiness_hook else None)
        self.configuration = alicloud.ess.ScalingConfiguration(
            child_name(name, "config"), scaling_group_id=self.group.id,
            scaling_configuration_name=child_name(name, "config"),
            instance_types=list(config.instance_types), image_id=image_id,
            instance_name=child_name(name, "node"),
            security_group_ids=None if erdma else list(security_group_ids),
            network_interfaces=[alicloud.ess.ScalingConfigurationNetworkInterfaceArgs(
                instance_type="Primary", network_interface_traffic_mode="HighPerformance",
                security_group_ids=list(security_group_ids))] if erdma else None,
            key_name=key_name, role_name=role_name, user_data=user_data,
            resource_group_id=resource_group_id, internet_max_bandwidth_out=0,
            system_disk_category="cloud_essd",
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
            tags=conventions.tags_for(child_name(name, "node"), {FLEET_TAG_KEY: fleet_tag}),
            active=True, enable=True, force_delete=True, opts=child)
        account = account_id(self)
        self.rules = {}
        self.alarms = []
        self._target_tracking(name, config, child)
        self._gpu_scaling(name, config, child)
        self.metric_group: alicloud.cms.MonitorGroup | None = None
        self.missing_data_alarm = None
        self.publisher = None
        self.dead_letter_after = dead_letter_after
        self._queue_scaling(name, config, conventions, scale_in_percent, contact_group,
                            account, child, publishes_queue_metric, publisher_logs)
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
        self._drain(name, config, conventions, account, drain_ports, child,
                    hands_back_jobs=hands_back_jobs)
        if role_name is not None:
            node_permissions(
                name, role_name=role_name, region=conventions.region, account=account,
                job_queue_name=self.publisher.job_queue_name if self.publisher else None,
                publishes_metric=config.queue_scaling is not None and self.publisher is None,
                conventions=conventions,
                parent=self)
        self.refresh = self._refresh(name, config, image_id, user_data) \
            if config.refreshes else None
        scaling_error_notice(name, region=conventions.region, account=account,
                             scaling_group_id=self.group.id, parent=self)
        self.scaling_group_id: pulumi.Output[str] = self.group.id
        self.scaling_configuration_id: pulumi.Output[str] = self.configuration.id
        self.scaling_rule_aris = {key: rule.ari for key, rule in self.rules.items()}
        self.metric_group_id = self.metric_group.id if self.metric_group else None
        self.job_queue_name = self.publisher.job_queue_name if self.publisher else None
        self.readiness_hook_id = self.readiness_hook.id if self.readiness_hook else None
        self.register_outputs({"scaling_group_id": self.scaling_group_id,
                               "scaling_configuration_id": self.scaling_configuration_id,
                               "scaling_rule_aris": self.scaling_rule_aris,
                               "job_queue_name": self.job_queue_name})

    def _drain(self, name: str, config: ScalingFleet, conventions: Conventions,
               account: pulumi.Output[str], drain_ports: Sequence[int],
               child: pulumi.ResourceOptions, *, hands_back_jobs: bool) -> None:
        """The scale-in hook, which starts the drain on every leaving instance through OOS,
        and the role OOS assumes for it (none without drain_seconds)."""
        self.drain_role, self.lifecycle_hook = None, None
        seconds = config.drain_seconds
        if seconds is None:
            return
        self.drain_role = drain_role(name, conventions=conventions, account=account,
                                     scaling_group_id=self.group.id, parent=self)
        queue = self.publisher.job_queue_name if self.publisher and hands_back_jobs else None
        metadata = pulumi.Output.all(self.drain_role.role_name, queue).apply(
            lambda values: drain_parameters(drain_command(
                seconds - DRAIN_MARGIN_SECONDS, drain_ports, values[1]), seconds, values[0]))
        self.lifecycle_hook = alicloud.ess.LifecycleHook(
            child_name(name, "drain"), name=child_name(name, "drain"),
            scaling_group_id=self.group.id, lifecycle_transition="SCALE_IN",
            heartbeat_timeout=seconds, default_result="CONTINUE",
            notification_arn=account.apply(
                lambda acct: oos_template_arn(conventions.region, acct)),
            notification_metadata=metadata, opts=child)

    def _refresh(self, name: str, config: ScalingFleet, image_id: pulumi.Input[str],
                 user_data: pulumi.Input[str] | None) -> alicloud.ess.InstanceRefresh:
        """A rolling refresh, replaced (so started again) whenever what the nodes boot
        changes: every input of InstanceRefresh is ForceNew, and the replacement trigger
        covers the user data and instance types the refresh inputs do not name."""
        refresh = config.refresh
        trigger = pulumi.Output.all(image_id, user_data, list(config.instance_types),
                                    config.system_disk_gib,
                                    config.system_disk_performance_level)
        return alicloud.ess.InstanceRefresh(
            child_name(name, "refresh"), scaling_group_id=self.group.id,
            desired_configuration_image_id=image_id,
            min_healthy_percentage=refresh.min_healthy_percent,
            max_healthy_percentage=refresh.max_healthy_percent,
            skip_matching=False,
            checkpoints=[alicloud.ess.InstanceRefreshCheckpointArgs(
                percentage=refresh.checkpoint_percent)] if refresh.checkpoint_percent
            else None,
            checkpoint_pause_time=refresh.pause_minutes if refresh.checkpoint_percent
            else None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.configuration],
                                        replacement_trigger=trigger))

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

    def _gpu_scaling(self, name: str, config: ScalingFleet,
                     child: pulumi.ResourceOptions) -> None:
        gpu = config.gpu_scaling
        if gpu is None:
            return
        for key, suffix, percent, operator, threshold, periods, warmup in (
                ("gpu_out", "gpu-high", gpu.grow_percent, ">=", gpu.scale_out_at,
                 gpu.evaluation_count, gpu.warmup_seconds),
                ("gpu_in", "gpu-low", -gpu.shrink_percent, "<=", gpu.scale_in_at,
                 gpu.scale_in_evaluation_count, None)):
            rule = alicloud.ess.ScalingRule(
                child_name(name, f"{suffix}-rule"),
                scaling_rule_name=child_name(name, f"{suffix}-rule"),
                scaling_group_id=self.group.id, scaling_rule_type="StepScalingRule",
                adjustment_type="PercentChangeInCapacity", min_adjustment_magnitude=1,
                estimated_instance_warmup=warmup,
                step_adjustments=[alicloud.ess.ScalingRuleStepAdjustmentArgs(
                    metric_interval_lower_bound="0" if percent > 0 else None,
                    metric_interval_upper_bound=None if percent > 0 else "0",
                    scaling_adjustment=percent)],
                opts=child)
            self.rules[key] = rule
            self.alarms.append(alicloud.ess.Alarm(
                child_name(name, suffix), name=child_name(name, suffix),
                scaling_group_id=self.group.id, alarm_actions=[rule.ari],
                metric_type="system", metric_name=GPU_UTILIZATION_METRIC,
                period=gpu.period_seconds, statistics="Average",
                comparison_operator=operator, threshold=f"{threshold:g}",
                evaluation_count=periods, enable=True, opts=child))

    def _queue_scaling(self, name: str, config: ScalingFleet, conventions: Conventions,
                       scale_in_percent: int, contact_group: pulumi.Input[str] | None,
                       account: pulumi.Input[str], child: pulumi.ResourceOptions,
                       publishes: bool, publisher_logs: LogTarget | None) -> None:
        queue = config.queue_scaling
        if queue is None:
            return
        steps = queue.scale_out_steps(config.max_size - config.min_size)
        scale_out = alicloud.ess.ScalingRule(
            child_name(name, "queue-out"), scaling_rule_name=child_name(name, "queue-out"),
            scaling_group_id=self.group.id, scaling_rule_type="StepScalingRule",
            adjustment_type="QuantityChangeInCapacity",
            estimated_instance_warmup=queue.warmup_seconds,
            step_adjustments=[alicloud.ess.ScalingRuleStepAdjustmentArgs(
                metric_interval_lower_bound=_bound(step.lower),
                metric_interval_upper_bound=_bound(step.upper),
                scaling_adjustment=step.adjustment) for step in steps],
            opts=child)
        scale_in = alicloud.ess.ScalingRule(
            child_name(name, "queue-in"), scaling_rule_name=child_name(name, "queue-in"),
            scaling_group_id=self.group.id, scaling_rule_type="StepScalingRule",
            adjustment_type="PercentChangeInCapacity", min_adjustment_magnitude=1,
            step_adjustments=[alicloud.ess.ScalingRuleStepAdjustmentArgs(
                metric_interval_upper_bound="0", scaling_adjustment=-scale_in_percent)],
            opts=child)
        self.rules.update({"queue_out": scale_out, "queue_in": scale_in})
        group_id: pulumi.Input[int]
        if queue.cloud_monitor_group_id is None:
            self.metric_group = alicloud.cms.MonitorGroup(
                child_name(name, "metrics"), monitor_group_name=child_name(name, "metrics"),
                tags=conventions.tags_for(child_name(name, "metrics")), opts=child)
            group_id = self.metric_group.id.apply(int)  # ess.Alarm takes the id as an int
        else:
            group_id = queue.cloud_monitor_group_id
        for suffix, rule, operator, threshold, periods in (
                ("queue-high", scale_out, ">=", queue.scale_out_threshold,
                 queue.evaluation_count),
                ("queue-empty", scale_in, "<=", queue.scale_in_threshold,
                 queue.scale_in_evaluation_count)):
            self.alarms.append(alicloud.ess.Alarm(
                child_name(name, suffix), name=child_name(name, suffix),
                scaling_group_id=self.group.id, alarm_actions=[rule.ari],
                metric_type="custom", cloud_monitor_group_id=group_id,
                metric_name=queue.metric_name, dimensions={FLEET_DIMENSION: name},
                period=queue.period_seconds, statistics="Average",
                comparison_operator=operator, threshold=f"{threshold:g}",
                evaluation_count=periods, enable=True, opts=child))
        if publishes:
            self.publisher = QueueMetricPublisher(
                child_name(name, "jobs"), queue=queue, fleet=name,
                metric_group_id=pulumi.Output.from_input(group_id).apply(str),
                conventions=conventions, logs=publisher_logs, account=account,
                dead_letter_after=self.dead_letter_after, opts=child)
        if contact_group is not None and queue.missing_data_minutes is not None:
            self.missing_data_alarm = missing_metric_alarm(
                name, queue, queue.missing_data_minutes,
                group_id=pulumi.Output.from_input(group_id).apply(str), account=account,
                contact_group=contact_group, conventions=conventions, parent=self)


def _bound(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


__all__ = ["GpuScalingGroup"]
