"""Publishing a fleet's queue metric to CloudMonitor (PutCustomMetric), standard library only.

`publish_queue_metric(...)` sends one value; `Credentials.resolve()` finds the caller's keys
(environment, else the ECS instance's RAM role). The `gpu-infra publish-queue-metric`
command wraps both.
"""

from gpu_infra_tools.metrics.publisher import (
    Credentials,
    MetricPoint,
    PublishError,
    publish_queue_metric,
    signed_request,
)

__all__ = ["Credentials", "MetricPoint", "PublishError", "publish_queue_metric",
           "signed_request"]
