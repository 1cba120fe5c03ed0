"""The publisher of a scaling fleet's queue metric, run by the stack: the fleet's job queue and
a Function Compute function on a timer that puts the queue's backlog as the metric.

Why Function Compute and not a unit on the nodes: the rendering fleet scales down to zero
nodes, and a fleet with no node must still see its first job arrive; a function on a timer
runs whatever the fleet's size, costs a few invocations a minute, and its one-minute
schedule matches the alarms' period. What it runs is gpu_infra.blocks.functions (standard
library only), shipped as source in the function's zip, so the plan shows the exact code.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.compute.fleet_ops import MAX_RETENTION_SECONDS, work_queue
from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy, trust_policy
from gpu_infra.blocks.logs import LogTarget
from gpu_infra.schema.compute import QueueScaling
from gpu_infra_facts.cloudmonitor import DESCRIBE_METRIC_LAST_ACTION, PUT_CUSTOM_METRIC_ACTION
from gpu_infra_facts.function_compute import (
    FC_SERVICE,
    LATEST_QUALIFIER,
    LOG_BEGIN_RULE,
    PUT_LOGS_ACTION,
    PYTHON_RUNTIME,
    SMALLEST_CPU,
    SMALLEST_DISK_MB,
    SMALLEST_MEMORY_MB,
    TIMER_TRIGGER,
)
from gpu_infra_facts.types import FC_FUNCTION, RAM_ROLE

COMPONENTS = Path(__file__).resolve().parents[3]
"""The source root the shipped modules are read from (components/)."""
SHIPPED_MODULES = ("gpu_infra/__init__.py", "gpu_infra/blocks/__init__.py",
                   "gpu_infra/blocks/functions/__init__.py",
                   "gpu_infra/blocks/functions/rpc.py",
                   "gpu_infra/blocks/functions/queue_metric.py",
                   "gpu_infra_facts/__init__.py", "gpu_infra_facts/cloudmonitor.py")
"""What the function imports, with their package paths (the packages' __init__ modules
import nothing)."""
ENTRY_POINT = ("index.py", "from gpu_infra.blocks.functions.queue_metric import handler\n\n"
               "__all__ = [\"handler\"]\n")
HANDLER = "index.handler"
FUNCTION_TIMEOUT_SECONDS = 30
"""Two CloudMonitor reads per metric and one put, each with a 10 s network timeout."""
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
"""Every zip entry's timestamp: the same source gives the same zip, so the plan only shows
a change of code when the code changed."""


def function_zip() -> bytes:
    """The function's code: SHIPPED_MODULES and ENTRY_POINT, stored (not compressed, so the
    bytes do not depend on the zlib version) with fixed timestamps."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        entries = [(path, (COMPONENTS / path).read_text(encoding="utf-8"))
                   for path in SHIPPED_MODULES] + [ENTRY_POINT]
        for path, text in entries:
            info = zipfile.ZipInfo(path, date_time=ZIP_TIME)
            info.external_attr = 0o644 << 16
            archive.writestr(info, text)
    return buffer.getvalue()


class QueueMetricPublisher(pulumi.ComponentResource):
    """The MNS job queue `<name>-queue` (`<fleet>-jobs-queue`; a received job stays
    invisible to other nodes for `queue.job_timeout_seconds`) and the function
    `<name>-publisher` (python3.10, 0.05 vCPU, 128 MB, 30 s) that a timer trigger runs every
    `queue.period_seconds`: it reads the queue's backlog from CloudMonitor and puts it as
    `queue.metric_name` under the fleet's dimension in `metric_group_id`. Its RAM role
    trusts Function Compute only and may only put custom metrics and read metrics (neither
    action takes a resource scope) and, with `logs`, write the function's logs to that one
    store (Function Compute writes them with the function's role), where each run's output
    and traceback land. With `dead_letter_after`, the queue `<name>-dead` (messages kept 7
    days, the MNS maximum) takes every job received that many times without being deleted
    (the job queue's dead-letter policy: SMQ "Dead-letter queue"; pulumi-alicloud
    ServiceQueue `dlq_policy`).

    Attributes: `job_queue`, `job_queue_name`, `dead_letter_queue` (or None), `role`,
    `function`, `trigger`.
    """

    TYPE = "gpu-infra:compute:QueueMetricPublisher"

    def __init__(self, name: str, *, queue: QueueScaling, fleet: str,
                 metric_group_id: pulumi.Input[str], conventions: Conventions,
                 logs: LogTarget | None = None, account: pulumi.Input[str] | None = None,
                 dead_letter_after: int | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`name`: the fleet's component name; `fleet`: the metric's dimension value;
        `logs`: the store the function's logs go to (default None: none), in `account`
        (the stack's, for the role's grant; required with `logs`); `dead_letter_after`:
        receives before a job goes to the dead-letter queue (default None: no such queue)."""
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.dead_letter_queue = None
        dlq_policy = None
        if dead_letter_after is not None:
            self.dead_letter_queue = work_queue(
                child_name(name, "dead"), visibility_seconds=queue.job_timeout_seconds,
                conventions=conventions, parent=self, retention_seconds=MAX_RETENTION_SECONDS)
            dlq_policy = alicloud.message.ServiceQueueDlqPolicyArgs(
                enabled=True, dead_letter_target_queue=self.dead_letter_queue.queue_name,
                max_receive_count=dead_letter_after)
        self.job_queue = work_queue(
            child_name(name, "queue"), visibility_seconds=queue.job_timeout_seconds,
            conventions=conventions, parent=self, dlq_policy=dlq_policy)
        self.job_queue_name: pulumi.Output[str] = self.job_queue.queue_name
        role_name = child_name(name, "publisher-role")
        self.role = alicloud.ram.Role(
            role_name, role_name=conventions.unique_name(RAM_ROLE, role_name),
            assume_role_policy_document=trust_policy(FC_SERVICE),
            description="Assumed by the fleet's queue-metric function",
            tags=conventions.tags_for(role_name), opts=fixed_name(self))
        store_arn = pulumi.Output.all(account, logs.project, logs.store).apply(
            lambda parts: log_store_arn(conventions.region, *parts)) \
            if logs is not None else None
        role_policy(child_name(name, "publisher-policy"), role_name=self.role.role_name,
                    document=publisher_policy(store_arn), conventions=conventions, parent=self,
                    description="Read CloudMonitor metrics and put the fleet's queue metric"
                                + (", write the function's logs" if logs else ""))
        function_name = child_name(name, "publisher")
        self.function = alicloud.fc.V3Function(
            function_name, function_name=conventions.unique_name(FC_FUNCTION, function_name),
            description=f"Puts the backlog of {fleet}'s job queue as {queue.metric_name}",
            runtime=PYTHON_RUNTIME, handler=HANDLER,
            code=alicloud.fc.V3FunctionCodeArgs(
                zip_file=base64.b64encode(function_zip()).decode("ascii")),
            cpu=SMALLEST_CPU, memory_size=SMALLEST_MEMORY_MB, disk_size=SMALLEST_DISK_MB,
            timeout=FUNCTION_TIMEOUT_SECONDS, instance_concurrency=1, role=self.role.arn,
            environment_variables={
                "GPU_INFRA_REGION": conventions.region, "GPU_INFRA_QUEUE": self.job_queue_name,
                "GPU_INFRA_GROUP_ID": metric_group_id, "GPU_INFRA_FLEET": fleet,
                "GPU_INFRA_METRIC": queue.metric_name},
            log_config=alicloud.fc.V3FunctionLogConfigArgs(
                project=logs.project, logstore=logs.store, log_begin_rule=LOG_BEGIN_RULE,
                enable_request_metrics=True, enable_instance_metrics=False)
            if logs is not None else None,
            tags=conventions.tags_for(function_name), opts=fixed_name(self))
        self.trigger = alicloud.fc.V3Trigger(
            child_name(name, "publisher-timer"), function_name=self.function.function_name,
            trigger_name="every-period", trigger_type=TIMER_TRIGGER,
            qualifier=LATEST_QUALIFIER,
            trigger_config=json.dumps({
                "cronExpression": f"@every {queue.period_seconds // 60}m",
                "payload": "", "enable": True}, separators=(",", ":")),
            opts=child)
        self.register_outputs({"job_queue_name": self.job_queue_name})


def log_store_arn(region: str, account: str, project: str, store: str) -> str:
    """The RAM resource of one SLS log store."""
    return f"acs:log:{region}:{account}:project/{project}/logstore/{store}"


def publisher_policy(store_arn: pulumi.Input[str] | None) -> pulumi.Output[str]:
    """What the function's role may do: read metrics (the queue's backlog), put the fleet's
    metric and, given `store_arn`, write logs to that store only."""
    def document(arn: str | None) -> str:
        statements = [{"Effect": "Allow",
                       "Action": [DESCRIBE_METRIC_LAST_ACTION, PUT_CUSTOM_METRIC_ACTION],
                       "Resource": ["*"]}]
        if arn is not None:
            statements.append({"Effect": "Allow", "Action": [PUT_LOGS_ACTION],
                               "Resource": [arn]})
        return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})

    return pulumi.Output.from_input(store_arn).apply(document)


__all__ = ["QueueMetricPublisher", "function_zip", "log_store_arn"]
