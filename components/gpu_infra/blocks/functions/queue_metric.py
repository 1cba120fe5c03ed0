"""The queue-metric publisher the stack runs in Function Compute every minute: it reads the
backlog of the fleet's job queue (an MNS queue) from CloudMonitor and puts it as the fleet's
queue metric, the one its scaling alarms watch.

Backlog = messages visible + in flight (received, not deleted: jobs running) + delayed, the
newest data point of each QUEUE_BACKLOG_METRICS for this queue; a metric without a data
point counts 0, and when none of them has one nothing is put (the fleet's missing-metric
alarm then tells the contacts) and the run fails with the reason in the function's log.

Settings (environment variables the stack sets): GPU_INFRA_REGION, GPU_INFRA_QUEUE,
GPU_INFRA_GROUP_ID, GPU_INFRA_FLEET, GPU_INFRA_METRIC; GPU_INFRA_CMS_ENDPOINT overrides the
CloudMonitor endpoint. Credentials: the function role's, from the handler's context.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from gpu_infra.blocks.functions.rpc import (
    Credentials,
    MetricPoint,
    PublishError,
    latest_datapoints,
    publish_queue_metric,
)
from gpu_infra_facts.cloudmonitor import QUEUE_BACKLOG_METRICS, QUEUE_NAMESPACE

SETTINGS = ("GPU_INFRA_REGION", "GPU_INFRA_QUEUE", "GPU_INFRA_GROUP_ID", "GPU_INFRA_FLEET",
            "GPU_INFRA_METRIC")
STATISTICS = ("Value", "Average", "Maximum")
"""Fields of a data point read for its value, first present wins."""


def queue_value(points: list[dict[str, object]], queue: str, region: str) -> float | None:
    """The value of the data point that names `queue` (in any dimension) in `region` (when
    the point names a region); None without one."""
    for point in points:
        if queue not in {value for value in point.values() if isinstance(value, str)}:
            continue
        if point.get("region", region) != region:
            continue
        for statistic in STATISTICS:
            value = point.get(statistic)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
    return None


def backlog(queue: str, *, region: str, credentials: Credentials,
            endpoint: str | None = None) -> float:
    """The queue's backlog (see the module docstring). Raises PublishError when no backlog
    metric has a data point for it."""
    values = [queue_value(latest_datapoints(QUEUE_NAMESPACE, metric, region=region,
                                            credentials=credentials, endpoint=endpoint),
                          queue, region)
              for metric in QUEUE_BACKLOG_METRICS]
    if all(value is None for value in values):
        raise PublishError(f"CloudMonitor has no {'/'.join(QUEUE_BACKLOG_METRICS)} data "
                           f"point for queue {queue!r} in {QUEUE_NAMESPACE}")
    return sum(value or 0.0 for value in values)


def _credentials(context: Any) -> Credentials:
    keys = getattr(context, "credentials", None)
    if keys is not None and getattr(keys, "access_key_id", None):
        return Credentials(keys.access_key_id, keys.access_key_secret,
                           getattr(keys, "security_token", None) or None)
    return Credentials.resolve()


def run(settings: Mapping[str, str], credentials: Credentials) -> dict[str, object]:
    """Measure and put once; what was put (printed to the function's log too)."""
    missing = [key for key in SETTINGS if not settings.get(key)]
    if missing:
        raise PublishError(f"missing settings: {', '.join(missing)}")
    region, endpoint = settings["GPU_INFRA_REGION"], settings.get("GPU_INFRA_CMS_ENDPOINT")
    value = backlog(settings["GPU_INFRA_QUEUE"], region=region, credentials=credentials,
                    endpoint=endpoint)
    point = MetricPoint(group_id=settings["GPU_INFRA_GROUP_ID"],
                        metric_name=settings["GPU_INFRA_METRIC"], value=value,
                        fleet=settings["GPU_INFRA_FLEET"])
    request_id = publish_queue_metric(point, region=region, credentials=credentials,
                                      endpoint=endpoint)
    result = {"queue": settings["GPU_INFRA_QUEUE"], "metric": point.metric_name,
              "fleet": point.fleet, "value": value, "request": request_id}
    print(json.dumps(result))
    return result


def handler(event: object, context: Any) -> str:
    """Function Compute entry point (timer trigger)."""
    return json.dumps(run(os.environ, _credentials(context)))
