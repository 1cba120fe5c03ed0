"""GPU faults on ACK paged to the stack's contacts: the node problem detector's GPU fault
events, which reach the stack's SLS project (ack-node-problem-detector's
`sls_project_name`), counted per node by CloudMonitor and alarmed on.

ACK nodes run no gpu-infra health check (the ECS fleets' GpuHealthAlarm metric): the node
problem detector finds XIDs in the node's system log, fences the GPU (gpu_infra_facts.ack,
NPD_FENCING_SINCE) and records a Kubernetes event. CloudMonitor cannot read SLS alerts'
contacts, and SLS alerts cannot page CloudMonitor contact groups, so the events are imported
into CloudMonitor (Hybrid Cloud Monitoring: cms.SlsGroup, cms.Namespace,
cms.HybridMonitorSlsTask) and one cms.Alarm on them tells the same contact group as every
other alarm of the stack. UNCONFIRMED on the way (each named in gpu_infra_facts): the event
store's name and layout, the NPD reasons' spelling, the imported metric's name.
"""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.compute.fleet_ops import account_id
from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra_facts.ack import (
    EVENT_NODE_KEY,
    EVENT_REASON_KEY,
    EVENT_STORE,
    NPD_GPU_FAULT_REASONS,
)
from gpu_infra_facts.hybrid_monitoring import (
    PROMETHEUS_ALARM_NAMESPACE,
    SLS_IMPORT_INTERVAL_SECONDS,
    sls_import_metric,
)
from gpu_infra_facts.types import CMS_NAMESPACE

TASK_NAME = "gpu_faults"
"""The import task's name (the metric's stem); one per namespace, so fixed."""
COUNT_ALIAS, NODE_ALIAS = "events", "node"
"""The statistic (events counted) and the label (the node) the import writes."""
RETENTION = "cms.s1.large"
"""The namespace keeps 15 days (the shortest of HYBRID_NAMESPACE_SPECIFICATIONS): the alarm
needs minutes."""
SLS_GROUP_NAME_LENGTH = 32
"""cms.SlsGroup names: 2-32 letters, digits and underscores, a letter first (TF
resource_alicloud_cms_sls_group.go line 63)."""


def sls_group_name(namespace: str) -> str:
    """The SLS group's name from the namespace's (hyphens become underscores; a longer name
    keeps its first characters and ends in the digits that make namespaces unique)."""
    name = namespace.replace("-", "_")
    if len(name) <= SLS_GROUP_NAME_LENGTH:
        return name
    return name[:SLS_GROUP_NAME_LENGTH - 7] + "_" + name[-6:]


class AckGpuFaultAlarm(pulumi.ComponentResource):
    """`<name>-events` (cms.SlsGroup: the project's EVENT_STORE), `<name>-metrics` (cms.Namespace
    `<name>`, 15 days), the import `<name>-import` (cms.HybridMonitorSlsTask: each
    minute, the events whose reason is one of NPD_GPU_FAULT_REASONS, counted per node) and
    the alarm `<name>-faults` (cms.Alarm, PromQL, Critical): the contact group hears as soon
    as one node has one GPU fault event in a minute.

    Outputs: `namespace`, `alarm_id`, `reasons` (what the import matches, UNCONFIRMED).
    """

    TYPE = "gpu-infra:monitoring:AckGpuFaultAlarm"

    def __init__(self, name: str, *, log_project: pulumi.Input[str], region: str,
                 contact_group: pulumi.Input[str], conventions: Conventions,
                 webhook: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`log_project`: the SLS project ack-node-problem-detector writes to; `webhook`:
        also POST the alarm there (default None)."""
        super().__init__(self.TYPE, name, None, opts)
        namespace = conventions.unique_name(CMS_NAMESPACE, name)
        group = alicloud.cms.SlsGroup(
            child_name(name, "events"), sls_group_name=sls_group_name(namespace),
            sls_group_description=f"Kubernetes events of {name}",
            sls_group_configs=[alicloud.cms.SlsGroupSlsGroupConfigArgs(
                sls_project=log_project, sls_logstore=EVENT_STORE, sls_region=region,
                sls_user_id=account_id(self))],
            opts=fixed_name(self))
        self.namespace = alicloud.cms.Namespace(
            child_name(name, "metrics"), namespace=namespace, specification=RETENTION,
            description=f"GPU fault events of {name}'s nodes", opts=fixed_name(self))
        task = alicloud.cms.HybridMonitorSlsTask(
            child_name(name, "import"), task_name=TASK_NAME,
            namespace=self.namespace.namespace, collect_target_type=group.sls_group_name,
            collect_interval=SLS_IMPORT_INTERVAL_SECONDS,
            description="Node problem detector GPU fault events, counted per node",
            sls_process_config=alicloud.cms.HybridMonitorSlsTaskSlsProcessConfigArgs(
                filter=alicloud.cms.HybridMonitorSlsTaskSlsProcessConfigFilterArgs(
                    relation="or", filters=[
                        alicloud.cms.HybridMonitorSlsTaskSlsProcessConfigFilterFilterArgs(
                            operator="=", sls_key_name=EVENT_REASON_KEY, value=reason)
                        for reason in NPD_GPU_FAULT_REASONS]),
                statistics=[alicloud.cms.HybridMonitorSlsTaskSlsProcessConfigStatisticArgs(
                    function="count", alias=COUNT_ALIAS, sls_key_name=EVENT_REASON_KEY)],
                group_bies=[alicloud.cms.HybridMonitorSlsTaskSlsProcessConfigGroupByArgs(
                    alias=NODE_ALIAS, sls_key_name=EVENT_NODE_KEY)]),
            opts=fixed_name(self))
        metric = sls_import_metric(TASK_NAME, COUNT_ALIAS)
        self.alarm = alicloud.cms.Alarm(
            child_name(name, "faults"), name=child_name(name, "faults"),
            project=PROMETHEUS_ALARM_NAMESPACE, metric=self.namespace.namespace,
            contact_groups=[contact_group], period=SLS_IMPORT_INTERVAL_SECONDS,
            prometheuses=[alicloud.cms.AlarmPrometheusArgs(
                prom_ql=f"sum by ({NODE_ALIAS}) ({metric}) >= 1", level="Critical", times=1,
                annotations={"summary": f"GPU fault on node {{{{$labels.{NODE_ALIAS}}}}}: "
                                        "see its events (kubectl describe node); the GPU "
                                        "is fenced, the node still runs"})],
            webhook=webhook, tags=conventions.tags_for(child_name(name, "faults")),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[task]))
        self.namespace_name: pulumi.Output[str] = self.namespace.namespace
        self.alarm_id: pulumi.Output[str] = self.alarm.id
        self.reasons = list(NPD_GPU_FAULT_REASONS)
        self.register_outputs({"namespace": self.namespace_name, "alarm_id": self.alarm_id,
                               "reasons": self.reasons})


__all__ = ["AckGpuFaultAlarm", "sls_group_name"]
