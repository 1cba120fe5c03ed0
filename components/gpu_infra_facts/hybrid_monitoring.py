"""CloudMonitor Hybrid Cloud Monitoring facts: importing SLS logs as metrics and alarming on
them (the ACK GPU fault alarm). Kept apart from cloudmonitor.py, which the queue-metric
publisher's code bundle carries."""

from __future__ import annotations

PROMETHEUS_ALARM_NAMESPACE = "acs_prometheus"
"""`project` of a cms.Alarm on Hybrid Cloud Monitoring metrics, whose `metric` is then the
namespace (the metric store) and whose condition is a PromQL statement (`prometheus`);
dimensions must be empty. Source: TF website/docs/r/cms_alarm.html.markdown lines 110 and
164-171, cloud_monitor_service_metric_alarm_rule.html.markdown lines 100-104 (81c43b6)."""
HYBRID_NAMESPACE_SPECIFICATIONS = {"cms.s1.large": 15, "cms.s1.xlarge": 32,
                                   "cms.s1.2xlarge": 63, "cms.s1.3xlarge": 93,
                                   "cms.s1.6xlarge": 185, "cms.s1.12xlarge": 376}
"""cms.Namespace `specification` -> days the namespace keeps its metrics (provider default
cms.s1.3xlarge). Source: TF alicloud/resource_alicloud_cms_namespace.go line 39 and
website/docs/r/cms_namespace.html.markdown (81c43b6)."""
SLS_IMPORT_INTERVAL_SECONDS = 60
"""`collect_interval` of a cms.HybridMonitorSlsTask (15 or 60, default 60; TF
resource_alicloud_cms_hybrid_monitor_sls_task.go line 49)."""


def sls_import_metric(task_name: str, alias: str) -> str:
    """The metric a Hybrid Cloud Monitoring import of SLS logs (cms.HybridMonitorSlsTask)
    writes for the statistic `alias`: `<task name>_<alias>`. UNCONFIRMED (CloudMonitor's
    "import SLS logs" page was not at hand): check the namespace's metrics in the
    CloudMonitor console after the first events."""
    return f"{task_name}_{alias}"
