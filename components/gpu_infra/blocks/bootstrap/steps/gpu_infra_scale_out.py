"""gpu_infra_scale_out: the scale-out answer of gpu-infra-api (scaling fleets only), with
the API's `call` and `metadata` passed in. Python 3.6+ standard library; types in comments,
which the node's copy drops (each byte is user data)."""

import json
import os
import sys
import time
import typing  # noqa: F401 (the type comments)

POLL_SECONDS = float(os.environ.get("GPU_INFRA_POLL_SECONDS", "15"))


def instance_health(cfg, call, instance_ids):
    # type: (typing.Dict[str, str], typing.Callable[..., typing.Any], typing.List[str]) -> typing.Dict[str, typing.Optional[str]]
    """Instance id -> its health tag (healthy, unhealthy) or None while it has not told."""
    answer = call("ecs", cfg["ECS_ENDPOINT"], "DescribeInstances", RegionId=cfg["REGION"],
                  InstanceIds=json.dumps(instance_ids), PageSize=100)
    health = dict.fromkeys(instance_ids)  # type: typing.Dict[str, typing.Optional[str]]
    for instance in answer.get("Instances", {}).get("Instance", []):
        tags = {t["TagKey"]: t["TagValue"] for t in instance.get("Tags", {}).get("Tag", [])}
        if tags.get(cfg["HEALTH_TAG_KEY"]) in ("healthy", "unhealthy"):
            health[instance["InstanceId"]] = tags[cfg["HEALTH_TAG_KEY"]]
    return health


def pending_action(cfg, call, instance_id):
    # type: (typing.Dict[str, str], typing.Callable[..., typing.Any], str) -> typing.Optional[typing.Tuple[str, typing.List[str]]]
    """This instance's pending scale-out lifecycle action: (token, instance ids) or None."""
    activities = call("ess", cfg["ESS_ENDPOINT"], "DescribeScalingActivities",
                      RegionId=cfg["REGION"], ScalingGroupId=cfg["SCALING_GROUP_ID"],
                      StatusCode="InProgress", PageSize=50)
    for activity in activities.get("ScalingActivities", {}).get("ScalingActivity", []):
        actions = call("ess", cfg["ESS_ENDPOINT"], "DescribeLifecycleActions",
                       RegionId=cfg["REGION"], ScalingActivityId=activity["ScalingActivityId"],
                       LifecycleActionStatus="Pending", MaxResults=50)
        for action in actions.get("LifecycleActions", {}).get("LifecycleAction", []):
            members = action.get("InstanceIds", {}).get("InstanceId", [])
            if action.get("LifecycleHookId") == cfg["LIFECYCLE_HOOK_ID"] and \
                    instance_id in members:
                return action["LifecycleActionToken"], members
    return None


def batch_result(health):
    # type: (typing.Dict[str, typing.Optional[str]]) -> str
    """The one answer ESS applies to the whole batch: CONTINUE when any instance is healthy
    (the unhealthy ones are then marked Unhealthy one by one and ESS replaces them), ABANDON
    when none is (releasing them harms no healthy node)."""
    return "CONTINUE" if "healthy" in health.values() else "ABANDON"


def first_boot():
    # type: () -> int
    """When this node first booted (the bootstrap stamps it once; reboots do not reset it)."""
    path = os.environ.get("GPU_INFRA_ROOT", "") + "/var/lib/gpu-infra/first-boot"
    try:
        with open(path, encoding="utf-8") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return int(time.time())


def answer_scale_out(cfg, call, metadata):
    # type: (typing.Dict[str, str], typing.Callable[..., typing.Any], typing.Callable[[str], str]) -> None
    """ESS identifies a scale-out wait by LifecycleActionToken only: CompleteLifecycleAction
    takes no instance id, and its result applies to every instance of the action (the whole
    batch of the scaling activity). So no instance answers for itself: each one tags its
    health, and the answer is given once every instance of the batch has (by any of them:
    the same tags give the same answer). An instance still silent SCALE_OUT_WAIT_SECONDS
    after this node's first boot counts as unhealthy. After CONTINUE each unhealthy instance is
    set Unhealthy (ESS SetInstanceHealth) so ESS removes and replaces it alone."""
    me = metadata("instance-id")
    deadline = first_boot() + int(cfg["SCALE_OUT_WAIT_SECONDS"])
    while True:
        found = pending_action(cfg, call, me)
        if found is None:
            print("gpu-infra-api: no pending scale-out action for this instance",
                  file=sys.stderr)
            return
        token, members = found
        health = instance_health(cfg, call, members)
        silent = [i for i, status in health.items() if status is None]
        if silent and time.time() < deadline:
            time.sleep(POLL_SECONDS)
            continue
        health.update(dict.fromkeys(silent, "unhealthy"))
        result = batch_result(health)
        try:
            call("ess", cfg["ESS_ENDPOINT"], "CompleteLifecycleAction", RegionId=cfg["REGION"],
                 LifecycleHookId=cfg["LIFECYCLE_HOOK_ID"], LifecycleActionToken=token,
                 LifecycleActionResult=result)
        except SystemExit:
            if pending_action(cfg, call, me) is None:
                return  # another instance of the batch answered first (the same answer)
            raise
        if result == "CONTINUE":
            for instance_id in sorted(i for i, s in health.items() if s == "unhealthy"):
                call("ess", cfg["ESS_ENDPOINT"], "SetInstanceHealth", RegionId=cfg["REGION"],
                     InstanceId=instance_id, HealthStatus="Unhealthy")
        return
