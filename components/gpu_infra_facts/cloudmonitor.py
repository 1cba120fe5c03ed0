"""CloudMonitor facts the queue-metric publisher, the node role and the fleet's alarms share.

Sources: CloudMonitor API PutCustomMetric (cms 2019-01-01; alibabacloud.com/help/en/cms/
cloudmonitor-1-0/developer-reference/api-cms-2019-01-01-putcustommetric, updated
2025-03-25): RAM action `cms:PutCustomMetric`, access level create, resource type "All
Resources" (no resource-level scoping); MetricList.N.{GroupId, MetricName, Dimensions (JSON
object string), Values ({"value": x}), Time (ms), Type (0 raw, 1 aggregated), Period}.
Endpoint `metrics.<region>.aliyuncs.com`; signature version 1.0 (HMAC-SHA1), as every
Alibaba Cloud RPC-style API.
"""

from __future__ import annotations

PUT_CUSTOM_METRIC_ACTION = "cms:PutCustomMetric"
"""The one RAM action a queue-metric publisher needs; it cannot be scoped to a resource."""
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
