"""Monitoring blocks on CloudMonitor (cms): `Alerting` (contacts, contact group, ECS event
alerts) once per stack, and `FleetAlarms` (GPU and host metric alarms) once per GPU fleet.

Metric names (namespace acs_ecs_dashboard): the per-instance GPU metrics
`instance_gpu_gpu_usedutilization`, `instance_gpu_memory_usedutilization` and
`instance_gpu_gpu_temperature` (dimension instanceId; the per-GPU `gpu_*` ones also need a
gpuId, unknown before the instance runs). They are published by the CloudMonitor agent, as
are `memory_usedutilization` and `diskusage_utilization` (dimension device);
`CPUUtilization` comes from the hypervisor.

Event names: CloudMonitor names ECS system events `<Resource>:<Cause>.<Impact>:<Status>`
(ECS "Summary of system events" page); spot reclaim notices are
`Instance:PreemptibleInstanceInterruption` (StatusNotification, about 5 minutes before the
instance is released).

Scope of the event rules: a rule's `group_id` is a CloudMonitor application group, and only
its members' events match. Fixed nodes are listed in it (MonitorGroupInstances). A scaling
fleet's instances come and go, so the group follows a Resource Management resource group
instead (CreateMonitorGroupByResourceGroupId, which cms.MonitorGroup calls when given
`resource_group_id`: TF alicloud/resource_alicloud_cms_monitor_group.go line 53): the
scaling group and every instance its configuration launches are put in that resource group
(`resource_group_id` of ess.ScalingGroup and ess.ScalingConfiguration). ESS's own events
(failed, partly successful or rejected scaling activities) reach CloudMonitor through the
group's ess.Notification and match the `ess` rule. That CloudMonitor keeps the application
group in step with the resource group as instances come and go, and the product name `ess`
of ESS events in event rules, are UNCONFIRMED (the provider's acceptance tests use `ecs`,
`ads` and `log`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name, fixed_name
from gpu_infra.schema.monitoring import (
    AlarmSettings,
    Contact,
    DiskAlarm,
    MonitoringConfig,
)
from gpu_infra_facts.allowed import GROUP_OPERATORS, ComparisonOperator
from gpu_infra_facts.types import (
    ALARM_CONTACT,
    ALARM_CONTACT_GROUP,
    CMS_METRIC_RULE_TEMPLATE,
    EVENT_RULE,
    RESOURCE_GROUP,
)

NAMESPACE = "acs_ecs_dashboard"
"""CloudMonitor namespace of ECS host and GPU metrics."""
CATEGORY = "ecs"
"""Service abbreviation that alert templates use for ECS."""


@dataclass(frozen=True)
class MetricSpec:
    """What one alarm of the `monitoring.alarms` section watches."""

    metric: str
    operator: ComparisonOperator


FLEET_METRICS: dict[str, MetricSpec] = {
    "gpu_idle": MetricSpec("instance_gpu_gpu_usedutilization", "<"),
    "gpu_memory": MetricSpec("instance_gpu_memory_usedutilization", ">="),
    "gpu_temperature": MetricSpec("instance_gpu_gpu_temperature", ">="),
    "cpu": MetricSpec("CPUUtilization", ">="),
    "memory": MetricSpec("memory_usedutilization", ">="),
    "system_disk": MetricSpec("diskusage_utilization", ">="),
}
"""Metric and operator of each alarm, keyed like FleetAlarmsConfig's fields."""

SPOT_EVENT_NAMES = ("Instance:PreemptibleInstanceInterruption",)
FAILURE_EVENT_NAMES = (
    "Instance:SystemFailure.Reboot:Executing",
    "Instance:SystemFailure.Reboot:Executed",
    "Instance:InstanceFailure.Reboot:Executing",
    "Instance:InstanceFailure.Reboot:Executed",
    "Instance:SystemFailure.Redeploy:Executing",
    "Instance:SystemFailure.Redeploy:Executed",
)
"""Unexpected O&M events: the host failed (SystemFailure) or the guest crashed
(InstanceFailure) and the instance restarts or moves to another host."""
ESS_PRODUCT = "ess"
"""Event rule product of Auto Scaling's events (UNCONFIRMED spelling, see the module)."""
CONTACT_NOTIFY_LEVEL = "4"
"""Event rule contact_parameters level: 4 = email and DingTalk (PutEventRuleTargets)."""
WEBHOOK_PROTOCOL = "http"
"""Event rule webhook_parameters protocol (HTTP callback; the URL itself is https)."""
WEBHOOK_METHOD = "POST"


class Alerting(pulumi.ComponentResource):
    """Alert contacts, their contact group, and event rules for ECS spot interruptions and
    instance failures (and, for scaling fleets, failed scaling activities) sent to the group
    and the optional webhook.

    The event rules belong to the CloudMonitor application group `<name>-nodes` (their
    `group_id`), which holds this stack's nodes only, so another stack's instances in the
    account never page this one's contacts: fixed nodes are added to it by FleetAlarms; for
    a scaling fleet it follows the resource group `<name>-fleet` (`resource_group_id`), in
    which the layout puts the scaling group and the instances it launches. ESS replaces
    reclaimed and failed instances itself, but a fleet that keeps losing them, or cannot
    scale (no stock, quota, a bootstrap that fails and abandons its readiness action), is
    what someone must hear of.

    Outputs: `contact_group_name`, `event_rule_ids` (kind -> id), `node_group_id` and
    `resource_group_id` (or None).
    """

    contacts: dict[str, alicloud.cms.AlarmContact]
    contact_group: alicloud.cms.AlarmContactGroup
    node_group: alicloud.cms.MonitorGroup | None
    resource_group: alicloud.resourcemanager.ResourceGroup | None
    event_rules: dict[str, alicloud.cms.EventRule]

    def __init__(self, name: str, *, config: MonitoringConfig, fixed_nodes: bool = True,
                 conventions: Conventions | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`fixed_nodes`: the fleet's instances are known (training) and are added to the
        application group by id; otherwise (a scaling fleet) the group follows a resource
        group the fleet's instances are launched into."""
        super().__init__("gpu-infra:monitoring:Alerting", name, None, opts)
        conventions = conventions or Conventions()
        self.contacts = {contact.name: _contact(name, contact, conventions, self)
                         for contact in config.contacts}
        group_name = child_name(name, "contacts")
        self.contact_group = alicloud.cms.AlarmContactGroup(
            group_name,
            alarm_contact_group_name=conventions.unique_name(ALARM_CONTACT_GROUP, group_name),
            contacts=[contact.alarm_contact_name for contact in self.contacts.values()],
            describe=f"Alert contacts of {name}", opts=fixed_name(self))
        self.contact_group_name: pulumi.Output[str] = \
            self.contact_group.alarm_contact_group_name
        webhook = pulumi.Output.secret(config.webhook) if config.webhook else None
        events = config.events
        patterns = {
            "spot-interruption": (events.spot_interruption, "ecs", ["StatusNotification"],
                                  SPOT_EVENT_NAMES),
            "instance-failure": (events.instance_failure, "ecs", ["*"], FAILURE_EVENT_NAMES),
            "scaling-failure": (events.scaling_failure and not fixed_nodes, ESS_PRODUCT,
                                ["*"], ()),
        }
        wanted = {kind: pattern[1:] for kind, pattern in patterns.items() if pattern[0]}
        self.node_group, self.resource_group = None, None
        if not fixed_nodes:
            group_name = child_name(name, "fleet")
            self.resource_group = alicloud.resourcemanager.ResourceGroup(
                group_name, display_name=group_name,
                resource_group_name=conventions.unique_name(RESOURCE_GROUP, group_name),
                tags=conventions.tags_for(group_name), opts=fixed_name(self))
        if wanted:
            node_group_name = child_name(name, "nodes")
            self.node_group = alicloud.cms.MonitorGroup(
                node_group_name, monitor_group_name=node_group_name,
                resource_group_id=self.resource_group.id if self.resource_group else None,
                resource_group_name=self.resource_group.resource_group_name
                if self.resource_group else None,
                tags=conventions.tags_for(node_group_name),
                # the provider never applies a new resource group (update semantics): a
                # group that followed the old one would scope the rules to nothing
                opts=pulumi.ResourceOptions(
                    parent=self,
                    replace_on_changes=["resourceGroupId"] if self.resource_group else None))
        self.event_rules = {
            kind: self._event_rule(name, kind, product, types, names, webhook,
                                   self.node_group.id, conventions)
            for kind, (product, types, names) in wanted.items() if self.node_group is not None
        }
        self.event_rule_ids = {kind: rule.id for kind, rule in self.event_rules.items()}
        self.node_group_id: pulumi.Output[str] | None = \
            self.node_group.id if self.node_group and fixed_nodes else None
        self.resource_group_id: pulumi.Output[str] | None = \
            self.resource_group.id if self.resource_group else None
        self.register_outputs({"contact_group_name": self.contact_group_name,
                               "event_rule_ids": self.event_rule_ids,
                               "node_group_id": self.node_group_id,
                               "resource_group_id": self.resource_group_id})

    def _event_rule(self, name: str, kind: str, product: str, types: list[str],
                    names: Sequence[str], webhook: pulumi.Output[str] | None,
                    group_id: pulumi.Input[str], conventions: Conventions,
                    ) -> alicloud.cms.EventRule:
        """One event rule; no `names`: every event of `product` the group's members send."""
        rule_name = child_name(name, kind)
        return alicloud.cms.EventRule(
            rule_name, rule_name=conventions.unique_name(EVENT_RULE, rule_name),
            status="ENABLED", group_id=group_id,
            description=f"{product.upper()} {kind.replace('-', ' ')} events of the stack's "
                        "nodes",
            event_pattern=alicloud.cms.EventRuleEventPatternArgs(
                product=product, event_type_lists=types, name_lists=list(names) or None),
            contact_parameters=[alicloud.cms.EventRuleContactParameterArgs(
                contact_group_name=self.contact_group_name, level=CONTACT_NOTIFY_LEVEL)],
            webhook_parameters=webhook_targets(webhook) if webhook is not None else None,
            opts=fixed_name(self))


def webhook_targets(url: pulumi.Input[str]) -> list[alicloud.cms.EventRuleWebhookParameterArgs]:
    """The event rule's webhook target: an HTTP POST to `url` (a secret input, which makes
    the whole `webhook_parameters` property secret)."""
    return [alicloud.cms.EventRuleWebhookParameterArgs(
        url=url, protocol=WEBHOOK_PROTOCOL, method=WEBHOOK_METHOD)]


def _contact(component: str, contact: Contact, conventions: Conventions,
             parent: pulumi.Resource) -> alicloud.cms.AlarmContact:
    contact_name = child_name(component, contact.name)
    return alicloud.cms.AlarmContact(
        contact_name, alarm_contact_name=conventions.unique_name(ALARM_CONTACT, contact_name),
        describe=f"{contact.name} ({component})",
        channels_mail=contact.email,
        channels_ding_web_hook=pulumi.Output.secret(contact.dingtalk_webhook)
        if contact.dingtalk_webhook else None,
        opts=fixed_name(parent))


class FleetAlarms(pulumi.ComponentResource):
    """The enabled `monitoring.alarms` for one GPU fleet, in one of two modes:

    - fixed nodes (`instance_ids` given): one `cms.Alarm` per alarm, listing every instance
      in `metric_dimensions`;
    - scaling group (no ids): instances come and go, so the alarms follow the fleet tag
      (FLEET_TAG_KEY = fleet name). A `cms.DynamicTagGroup` keeps an application group of
      the tagged instances and applies a `cms.MetricRuleTemplate` holding the alarms.
      Chosen over MonitorGroup + GroupMetricRule, which needs the members' instance ids
      (MonitorGroupInstances) and the group id, neither known for a scaling group.
      Templates take no period (the metric's own is used) and whole hours for the
      effective interval.

    Outputs: `alarm_ids` (alarm -> id, fixed mode), `template_id` and `tag_group_id`
    (tag mode; None otherwise).
    """

    alarms: dict[str, alicloud.cms.Alarm]
    template: alicloud.cms.MetricRuleTemplate | None
    tag_group: alicloud.cms.DynamicTagGroup | None
    node_group_members: alicloud.cms.MonitorGroupInstances | None

    def __init__(self, name: str, *, config: MonitoringConfig, fleet_name: str,
                 contact_group: pulumi.Input[str], conventions: Conventions,
                 instance_ids: pulumi.Input[Sequence[str]] | None = None,
                 instance_names: pulumi.Input[Sequence[str]] | None = None,
                 node_group_id: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`node_group_id` (Alerting's application group of the nodes): fixed nodes
        (`instance_ids` with their `instance_names`) become its members."""
        super().__init__("gpu-infra:monitoring:FleetAlarms", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.node_group_members = None
        if node_group_id is not None and instance_ids is not None:
            members = pulumi.Output.all(instance_ids, instance_names or instance_ids).apply(
                lambda pair: [alicloud.cms.MonitorGroupInstancesInstanceArgs(
                    category=CATEGORY, instance_id=instance_id, instance_name=instance_name,
                    region_id=conventions.region)
                    for instance_id, instance_name in zip(*pair, strict=True)])
            self.node_group_members = alicloud.cms.MonitorGroupInstances(
                child_name(name, "node-group-members"), group_id=node_group_id,
                instances=members, opts=child)
        enabled = config.alarms.enabled()
        self.alarms, self.template, self.tag_group = {}, None, None
        if instance_ids is not None:
            self.alarms = {
                key: self._alarm(name, key, alarm, config, contact_group, instance_ids,
                                 conventions, child)
                for key, alarm in enabled.items()}
        elif enabled:
            self.template = self._template(name, enabled, config, conventions, self)
            tag_group_name = child_name(name, "fleet-group")
            self.tag_group = alicloud.cms.DynamicTagGroup(
                tag_group_name, tag_key=FLEET_TAG_KEY,
                match_expresses=[alicloud.cms.DynamicTagGroupMatchExpressArgs(
                    tag_value=fleet_name, tag_value_match_function="equals")],
                match_express_filter_relation="and",
                contact_group_lists=[contact_group], template_id_lists=[self.template.id],
                opts=child)
        self.alarm_ids = {key: alarm.id for key, alarm in self.alarms.items()}
        self.template_id = self.template.id if self.template else None
        self.tag_group_id = self.tag_group.id if self.tag_group else None
        self.register_outputs({"alarm_ids": self.alarm_ids, "template_id": self.template_id,
                               "tag_group_id": self.tag_group_id})

    @staticmethod
    def _alarm(name: str, key: str, alarm: AlarmSettings, config: MonitoringConfig,
               contact_group: pulumi.Input[str], instance_ids: pulumi.Input[Sequence[str]],
               conventions: Conventions, child: pulumi.ResourceOptions) -> alicloud.cms.Alarm:
        spec = FLEET_METRICS[key]
        extra = {"device": alarm.device} if isinstance(alarm, DiskAlarm) else {}
        dimensions = pulumi.Output.from_input(instance_ids).apply(
            lambda ids: json.dumps([{"instanceId": i, **extra} for i in ids],
                                   separators=(",", ":")))
        alarm_name = child_name(name, key.replace("_", "-"))
        return alicloud.cms.Alarm(
            alarm_name, name=alarm_name, project=NAMESPACE, metric=spec.metric,
            metric_dimensions=dimensions, period=alarm.period,
            contact_groups=[contact_group], silence_time=config.silence_time,
            effective_interval=config.effective_interval, enabled=True,
            **_alarm_escalation(alarm, spec.operator),
            tags=conventions.tags_for(alarm_name), opts=child)

    @staticmethod
    def _template(name: str, enabled: dict[str, AlarmSettings], config: MonitoringConfig,
                  conventions: Conventions, parent: pulumi.Resource,
                  ) -> alicloud.cms.MetricRuleTemplate:
        start, end = config.effective_interval.split("-")
        template_name = child_name(name, "alarms")
        return alicloud.cms.MetricRuleTemplate(
            template_name,
            metric_rule_template_name=conventions.unique_name(CMS_METRIC_RULE_TEMPLATE,
                                                              template_name),
            description=f"GPU fleet alarms of {name}", silence_time=config.silence_time,
            enable_start_time=f"{int(start.split(':')[0]):02d}",
            enable_end_time=f"{int(end.split(':')[0]):02d}",
            alert_templates=[
                alicloud.cms.MetricRuleTemplateAlertTemplateArgs(
                    category=CATEGORY, namespace=NAMESPACE,
                    metric_name=FLEET_METRICS[key].metric,
                    rule_name=child_name(name, key.replace("_", "-")),
                    escalations=_template_escalations(
                        alarm, GROUP_OPERATORS[FLEET_METRICS[key].operator]))
                for key, alarm in enabled.items()],
            opts=fixed_name(parent))


class AlarmEscalation(TypedDict, total=False):
    """The one escalation argument of a cms.Alarm, at the alarm's level."""

    escalations_critical: alicloud.cms.AlarmEscalationsCriticalArgs
    escalations_warn: alicloud.cms.AlarmEscalationsWarnArgs
    escalations_info: alicloud.cms.AlarmEscalationsInfoArgs


def _alarm_escalation(alarm: AlarmSettings, operator: str) -> AlarmEscalation:
    threshold = f"{alarm.threshold:g}"
    if alarm.level == "critical":
        return {"escalations_critical": alicloud.cms.AlarmEscalationsCriticalArgs(
            comparison_operator=operator, statistics=alarm.statistics, threshold=threshold,
            times=alarm.times)}
    if alarm.level == "warn":
        return {"escalations_warn": alicloud.cms.AlarmEscalationsWarnArgs(
            comparison_operator=operator, statistics=alarm.statistics, threshold=threshold,
            times=alarm.times)}
    return {"escalations_info": alicloud.cms.AlarmEscalationsInfoArgs(
        comparison_operator=operator, statistics=alarm.statistics, threshold=threshold,
        times=alarm.times)}


def _template_escalations(alarm: AlarmSettings, operator: str,
                          ) -> alicloud.cms.MetricRuleTemplateAlertTemplateEscalationsArgs:
    """A rule template's escalation at the alarm's level (`times` is a string here)."""
    threshold, times = f"{alarm.threshold:g}", str(alarm.times)
    cms = alicloud.cms
    if alarm.level == "critical":
        return cms.MetricRuleTemplateAlertTemplateEscalationsArgs(
            critical=cms.MetricRuleTemplateAlertTemplateEscalationsCriticalArgs(
                comparison_operator=operator, statistics=alarm.statistics,
                threshold=threshold, times=times))
    if alarm.level == "warn":
        return cms.MetricRuleTemplateAlertTemplateEscalationsArgs(
            warn=cms.MetricRuleTemplateAlertTemplateEscalationsWarnArgs(
                comparison_operator=operator, statistics=alarm.statistics,
                threshold=threshold, times=times))
    return cms.MetricRuleTemplateAlertTemplateEscalationsArgs(
        info=cms.MetricRuleTemplateAlertTemplateEscalationsInfoArgs(
            comparison_operator=operator, statistics=alarm.statistics, threshold=threshold,
            times=times))


__all__ = ["Alerting", "FleetAlarms"]
