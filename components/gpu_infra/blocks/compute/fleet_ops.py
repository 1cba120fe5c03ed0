"""What keeps a scaling fleet operable: the drain of the instances a scale-in releases, the
alert when its queue metric stops arriving, and what its nodes may do with the fleet.

Drain (docs/layouts/inference.md, "Draining"): on scale-in ESS holds the leaving instances for
`drain_seconds` and starts the OOS template ACS-ESS-LifeCycleRunCommand (facts:
gpu_infra_facts.lifecycle) with this fleet's drain as its command: Cloud Assistant runs it on
each leaving instance at once (blocks.bootstrap.drain_command: stop taking work, wait for jobs
and requests in flight up to the limit, hand back the rest), and when every instance's drain
has returned the template answers the scale-in's lifecycle action with CONTINUE, so two
instances leaving together are released together, neither before its work is done or handed
back. Without an answer ESS continues (releases) when the time is up.

ARN formats: RAM resources `acs:mns:<region>:<account>:/queues/<name>/messages` and
`acs:ess:<region>:<account>:scalinggroup/<id>` (RAM authorization tables of MNS and ESS).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name, fixed_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy, trust_policy
from gpu_infra.schema.compute import QueueScaling
from gpu_infra_facts.cloudmonitor import (
    CUSTOM_METRIC_NAMESPACE_PREFIX,
    FLEET_DIMENSION,
)
from gpu_infra_facts.lifecycle import (
    ANSWER_ACTIONS,
    NOTIFICATION_METADATA_MAX,
    OOS_SERVICE,
    READ_COMMAND_ACTIONS,
    RUN_COMMAND,
)
from gpu_infra_facts.node_apis import allow_statements
from gpu_infra_facts.types import MNS_QUEUE, RAM_ROLE, SERVICE_METRIC_ALARM_RULE

QUEUE_POLL_SECONDS = 30
"""Long-poll wait of ReceiveMessage on a job queue (the MNS maximum)."""
MAX_RETENTION_SECONDS = 604800
"""The longest an MNS queue keeps a message (message_retention_period: 60 to 604800 s,
pulumi-alicloud ServiceQueue; the default is 345600, 4 days)."""
JOB_CALLS = ("ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility")
"""What a node does with the messages of its fleet's job queue (their grants:
gpu_infra_facts.node_apis)."""
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
               parent: pulumi.Resource, retention_seconds: int | None = None,
               dlq_policy: alicloud.message.ServiceQueueDlqPolicyArgs | None = None,
               ) -> alicloud.message.ServiceQueue:
    """An MNS queue whose message, once received, stays invisible to other receivers for
    `visibility_seconds` (a job's time limit); `retention_seconds`: how long a message is
    kept (default None: the MNS default, 4 days); `dlq_policy`: where jobs received too
    often go (default None: nowhere)."""
    return alicloud.message.ServiceQueue(
        queue_name, queue_name=conventions.unique_name(MNS_QUEUE, queue_name),
        polling_wait_seconds=QUEUE_POLL_SECONDS,
        visibility_timeout=visibility_seconds, message_retention_period=retention_seconds,
        dlq_policy=dlq_policy, tags=conventions.tags_for(queue_name),
        opts=fixed_name(parent))


def node_permissions(name: str, *, role_name: pulumi.Input[str], region: str,
                     account: pulumi.Input[str], publishes_metric: bool,
                     job_queue_name: pulumi.Input[str] | None, conventions: Conventions,
                     parent: pulumi.Resource,
                     ) -> tuple[alicloud.ram.Policy, alicloud.ram.RolePolicyAttachment] | None:
    """A policy on the node role for this fleet only: publish the queue metric
    (cms:PutCustomMetric has no resource-level scope, so it is that one action on "*"),
    take the fleet's jobs. None when there is nothing to grant."""
    if job_queue_name is None and not publishes_metric:
        return None
    document = pulumi.Output.all(account, job_queue_name).apply(
        lambda values: _permissions_document(region, values[0], publishes_metric, values[1]))
    return role_policy(
        child_name(name, "fleet-policy"), role_name=role_name, document=document,
        description="Queue metric and jobs of one GPU fleet",
        conventions=conventions, parent=parent)


def _permissions_document(region: str, account: str, publishes_metric: bool,
                          job_queue_name: str | None) -> str:
    statements: list[dict[str, object]] = []
    if publishes_metric:
        statements += allow_statements("cms", ["PutCustomMetric"], region=region,
                                       account=account)
    if job_queue_name is not None:
        statements += allow_statements("mns", JOB_CALLS, region=region, account=account,
                                       names=[job_queue_name])
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})


def drain_role(name: str, *, conventions: Conventions, account: pulumi.Input[str],
               scaling_group_id: pulumi.Input[str], parent: pulumi.Resource,
               ) -> alicloud.ram.Role:
    """The role the drain's OOS template assumes: trusted by OOS only; it may run Cloud
    Assistant commands on this fleet's instances (their GpuFleet tag) and read the results,
    and answer this group's lifecycle actions."""
    role_name = child_name(name, "drain-role")
    role = alicloud.ram.Role(
        role_name, role_name=conventions.unique_name(RAM_ROLE, role_name),
        assume_role_policy_document=trust_policy(OOS_SERVICE),
        description="Assumed by OOS to drain the instances a scale-in releases",
        tags=conventions.tags_for(role_name), opts=fixed_name(parent))
    region = conventions.region
    document = pulumi.Output.all(account, scaling_group_id).apply(lambda values: json.dumps({
        "Version": RAM_POLICY_VERSION, "Statement": [
            {"Effect": "Allow", "Action": [RUN_COMMAND],
             "Resource": [f"acs:ecs:{region}:{values[0]}:instance/*"],
             "Condition": {"StringEquals": {f"acs:ResourceTag/{FLEET_TAG_KEY}": name}}},
            {"Effect": "Allow", "Action": [RUN_COMMAND],
             "Resource": [f"acs:ecs:{region}:{values[0]}:command/*"]},
            {"Effect": "Allow", "Action": list(READ_COMMAND_ACTIONS), "Resource": ["*"]},
            {"Effect": "Allow", "Action": list(ANSWER_ACTIONS), "Resource": [
                f"acs:ess:{region}:{values[0]}:scalinggroup/{values[1]}"]}]}))
    role_policy(child_name(name, "drain-policy"), role_name=role.role_name, document=document,
                description="Run the drain on leaving instances, answer their scale-in",
                conventions=conventions, parent=parent)
    return role


def drain_parameters(command: str, timeout_seconds: int, role_name: str) -> str:
    """The template's parameters (the hook's notification metadata): the drain, its
    timeout, CONTINUE once it returned, the role; ESS fills in the instances and the
    action. ValueError past the hook's NOTIFICATION_METADATA_MAX."""
    metadata = json.dumps({"commandType": "RunShellScript", "commandContent": command,
                           "timeout": timeout_seconds, "lifecycleActionResult": "CONTINUE",
                           "OOSAssumeRole": role_name}, separators=(",", ":"))
    if len(metadata) > NOTIFICATION_METADATA_MAX:
        raise ValueError(f"the drain's parameters are {len(metadata)} characters; a lifecycle "
                         f"hook takes at most {NOTIFICATION_METADATA_MAX}")
    return metadata


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
