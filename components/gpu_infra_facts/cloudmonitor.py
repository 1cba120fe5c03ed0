"""CloudMonitor facts the queue-metric publisher, the node role and the fleet's alarms share.

Sources: CloudMonitor API PutCustomMetric (cms 2019-01-01; alibabacloud.com/help/en/cms/
cloudmonitor-1-0/developer-reference/api-cms-2019-01-01-putcustommetric, updated
2025-03-25): RAM action `cms:PutCustomMetric`, access level create, resource type "All
Resources" (no resource-level scoping); MetricList.N.{GroupId, MetricName, Dimensions (JSON
object string), Values ({"value": x}), Time (ms), Type (0 raw, 1 aggregated), Period}.
Endpoint `metrics.<region>.aliyuncs.com`; signature version 1.0 (HMAC-SHA1), as every
Alibaba Cloud RPC-style API. DescribeMetricLast (same API version): Namespace, MetricName,
Length, NextToken; the answer's `Datapoints` is a JSON string of a list of objects, one per
resource, carrying its dimensions and statistics (Average, Maximum, ...), `NextToken` the next
page's cursor; RAM action `cms:DescribeMetricLast`, no resource-level scoping.
"""

from __future__ import annotations

PUT_CUSTOM_METRIC_ACTION = "cms:PutCustomMetric"
"""The RAM action that puts a queue metric; it cannot be scoped to a resource."""
CMS_API_VERSION = "2019-01-01"
RAW_DATA_TYPE = "0"
"""MetricList.N.Type for a raw value (CloudMonitor aggregates it per period)."""
FLEET_DIMENSION = "fleet"
"""Dimension key of a fleet's queue metric; its value is the fleet's name. The ESS alarms
that scale the fleet match the same dimension."""
CUSTOM_METRIC_NAMESPACE_PREFIX = "acs_customMetric_"
"""Namespace of custom metrics in CloudMonitor alert rules: the prefix + the account id."""


def cms_endpoint(region: str) -> str:
    """The public CloudMonitor API endpoint of `region`."""
    return f"https://metrics.{region}.aliyuncs.com/"


CMS_SUCCESS_CODE = "200"
"""The `Code` of every successful CloudMonitor answer."""
DESCRIBE_METRIC_LAST_ACTION = "cms:DescribeMetricLast"
"""What a publisher needs to read a cloud service's metric (no resource-level scoping)."""
QUEUE_NAMESPACE = "acs_smq"
"""CloudMonitor namespace of Simple Message Queue (formerly MNS) queue metrics. Source: MNS
API GetQueueAttributes (mns-open 2022-01-19, updated 2025-11-24): its ActiveMessages,
InactiveMessages and DelayMessages fields are being retired (they will read 0), replaced by
the CloudMonitor metrics below, documented under metric-meta/acs_smq/smq. UNCONFIRMED: the
metrics' dimension keys (the publisher matches a data point by the queue's name in any
dimension, so it does not depend on them) and their reporting period."""
QUEUE_BACKLOG_METRICS = ("NumberOfMessagesVisible", "NumberOfMessagesInvisible",
                         "NumberOfMessagesDelayed")
"""Messages waiting, being worked on (received, not yet deleted) and delayed: their sum is
a job queue's backlog counting running jobs. Source: as QUEUE_NAMESPACE."""

GPU_HEALTH_METRIC = "gpu_health_faults"
"""The node GPU-health custom metric: the number of faults the node's last check found
(0: healthy), put under the FLEET_DIMENSION into the stack's GPU-health group (stack output
`gpu_health_group_id`). The stack's alarm fires on its Maximum, so one faulty node pages;
which node it is, and what it found, go in a custom event and its bootstrap log."""
GPU_HEALTH_STATISTIC = "Maximum"
