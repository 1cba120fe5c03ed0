"""What keeps a scaling fleet operable: the drain notification of its scale-in hook, the
alert when its queue metric stops arriving, and what its nodes may do with the fleet.

Drain contract (README "How the fleet drains"): on scale-in ESS holds each instance for
`drain_seconds` and sends one message to the MNS queue `<fleet>-drain` (stack output
`drain_queue`) naming the lifecycle hook, the action token and the instances. A drainer
(the job scheduler, or an agent on the nodes: the node role may receive and delete the
queue's messages and complete the fleet's lifecycle actions) stops sending work to those
instances, lets what runs finish, then calls CompleteLifecycleAction with the token and
CONTINUE. Without an answer ESS continues (releases) when the time is up.

ARN formats: lifecycle-hook and notification targets `acs:ess:<region>:<account>:queue/<name>`
(ess.Notification docstring); RAM resources `acs:mns:<region>:<account>:/queues/<name>/messages`
and `acs:ess:<region>:<account>:scalinggroup/<id>` (RAM authorization tables of MNS and ESS).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy
from gpu_infra.schema.compute import QueueScaling
from gpu_infra_facts.cloudmonitor import (
    CUSTOM_METRIC_NAMESPACE_PREFIX,
    FLEET_DIMENSION,
    PUT_CUSTOM_METRIC_ACTION,
)
from gpu_infra_facts.types import MNS_QUEUE, SERVICE_METRIC_ALARM_RULE

QUEUE_POLL_SECONDS = 30
"""Long-poll wait of ReceiveMessage on the drain and job queues (the MNS maximum)."""
DRAIN_ACTIONS = ("mns:ReceiveMessage", "mns:DeleteMessage", "mns:ChangeMessageVisibility")
LIFECYCLE_ACTIONS = ("ess:CompleteLifecycleAction", "ess:RecordLifecycleActionHeartbeat")
SCALING_ERROR_NOTICES = ("AUTOSCALING:SCALE_OUT_ERROR", "AUTOSCALING:SCALE_IN_ERROR",
                         "AUTOSCALING:SCALE_REJECT", "AUTOSCALING:SCALE_OUT_WARN",
                         "AUTOSCALING:SCALE_IN_WARN")
"""ESS notifications of a group that cannot keep its capacity (ess.Notification types; the
two WARN ones, partly successful activities, are in Auto Scaling's "Enable the event
notification feature" table, updated 2023-11-23, though not in the SDK docstring's list):
failed and rejected activities, and activities some of whose instances failed, such as a
node whose bootstrap failed and abandoned its readiness action."""
MISSING_DATA_POLICY = "INSUFFICIENT_DATA"
"""cloudmonitor.ServiceMetricAlarmRule no_data_policy that alerts when no value arrives."""


def account_id(parent: pulumi.Resource) -> pulumi.Output[str]:
    """The account the stack deploys into (the caller's identity)."""
    return alicloud.get_caller_identity_output(
        opts=pulumi.InvokeOutputOptions(parent=parent)).account_id


def work_queue(queue_name: str, *, visibility_seconds: int, conventions: Conventions,
               parent: pulumi.Resource) -> alicloud.message.ServiceQueue:
    """An MNS queue whose message, once received, stays invisible to other receivers for
    `visibility_seconds` (the drain window; a job's time limit)."""
    return alicloud.message.ServiceQueue(
        queue_name, queue_name=conventions.unique_name(MNS_QUEUE, queue_name),
        polling_wait_seconds=QUEUE_POLL_SECONDS,
        visibility_timeout=visibility_seconds, tags=conventions.tags_for(queue_name),
        opts=fixed_name(parent))


def ess_queue_arn(region: str, account: pulumi.Input[str],
                  queue_name: pulumi.Input[str]) -> pulumi.Output[str]:
    """An MNS queue as an ESS notification target."""
    return pulumi.Output.concat("acs:ess:", region, ":", account, ":queue/", queue_name)


def node_permissions(name: str, *, role_name: pulumi.Input[str], region: str,
                     account: pulumi.Input[str], scaling_group_id: pulumi.Input[str],
                     drain_queue_name: pulumi.Input[str] | None, publishes_metric: bool,
                     conventions: Conventions, parent: pulumi.Resource,
                     job_queue_name: pulumi.Input[str] | None = None,
                     ) -> tuple[alicloud.ram.Policy, alicloud.ram.RolePolicyAttachment] | None:
    """A policy on the node role for this fleet only: publish the queue metric
    (cms:PutCustomMetric has no resource-level scope, so it is that one action on "*"),
    receive and delete the fleet's drain messages and jobs, complete the fleet's lifecycle
    actions. None when there is nothing to grant."""
    if drain_queue_name is None and job_queue_name is None and not publishes_metric:
        return None
    document = pulumi.Output.all(account, scaling_group_id, drain_queue_name,
                                 job_queue_name).apply(
        lambda values: _permissions_document(region, values[0], values[1], values[2],
                                             publishes_metric, values[3]))
    return role_policy(
        child_name(name, "fleet-policy"), role_name=role_name, document=document,
        description="Queue metric, drain messages and lifecycle actions of one GPU fleet",
        conventions=conventions, parent=parent)


def _permissions_document(region: str, account: str, group_id: str, queue_name: str | None,
                          publishes_metric: bool, job_queue_name: str | None) -> str:
    statements: list[dict[str, object]] = []
    if publishes_metric:
        statements.append({"Effect": "Allow", "Action": [PUT_CUSTOM_METRIC_ACTION],
                           "Resource": ["*"]})
    if queue_name is not None:
        statements += [
            {"Effect": "Allow", "Action": list(DRAIN_ACTIONS),
             "Resource": [f"acs:mns:{region}:{account}:/queues/{queue_name}/messages"]},
            {"Effect": "Allow", "Action": list(LIFECYCLE_ACTIONS),
             "Resource": [f"acs:ess:{region}:{account}:scalinggroup/{group_id}"]}]
    if job_queue_name is not None:
        statements.append({"Effect": "Allow", "Action": list(DRAIN_ACTIONS),
                           "Resource": [f"acs:mns:{region}:{account}:/queues/"
                                        f"{job_queue_name}/messages"]})
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})


def scaling_error_notice(name: str, *, region: str, account: pulumi.Input[str],
                         scaling_group_id: pulumi.Input[str],
                         parent: pulumi.Resource) -> alicloud.ess.Notification:
    """Scale-out and scale-in failures of this group only, to CloudMonitor's event center
    (the group-scoped counterpart of the ECS event rules fixed nodes get)."""
    return alicloud.ess.Notification(
        child_name(name, "scaling-errors"), scaling_group_id=scaling_group_id,
        notification_arn=pulumi.Output.concat("acs:ess:", region, ":", account,
                                              ":cloudmonitor"),
        notification_types=list(SCALING_ERROR_NOTICES),
        opts=pulumi.ResourceOptions(parent=parent))


def missing_metric_alarm(name: str, queue: QueueScaling, minutes: int, *,
                         group_id: pulumi.Input[str], account: pulumi.Input[str],
                         contact_group: pulumi.Input[str], conventions: Conventions,
                         parent: pulumi.Resource,
                         ) -> alicloud.cloudmonitor.ServiceMetricAlarmRule:
    """Alert `contact_group` when the queue metric has not arrived for `minutes`: the
    rule's condition (backlog below 0) never holds, so it only ever fires through its
    no-data policy."""
    rule_name = child_name(name, "queue-missing")
    periods = max(1, minutes * 60 // queue.period_seconds)
    resources = pulumi.Output.from_input(group_id).apply(lambda gid: json.dumps(
        [{"groupId": gid, FLEET_DIMENSION: name}], separators=(",", ":")))
    return alicloud.cloudmonitor.ServiceMetricAlarmRule(
        rule_name, rule_name=rule_name,
        metric_alarm_rule_id=conventions.unique_name(SERVICE_METRIC_ALARM_RULE, rule_name),
        namespace=pulumi.Output.concat(CUSTOM_METRIC_NAMESPACE_PREFIX, account),
        metric_name=queue.metric_name, resources=resources, contact_groups=contact_group,
        period=str(queue.period_seconds), no_data_policy=MISSING_DATA_POLICY, status=True,
        send_ok=True,
        escalations=alicloud.cloudmonitor.ServiceMetricAlarmRuleEscalationsArgs(
            critical=alicloud.cloudmonitor.ServiceMetricAlarmRuleEscalationsCriticalArgs(
                comparison_operator="LessThanThreshold", statistics="Average",
                threshold="0", times=periods)),
        opts=fixed_name(parent))
