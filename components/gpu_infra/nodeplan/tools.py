"""The node tools need a bucket: a fleet whose nodes would get them (blocks.bootstrap
node_tools_files) fetches them from one of the stack's buckets, so a stack that lists no
bucket purpose leaves its nodes without them; the finding says what they miss, an ERROR where
the environment's profile requires them (prod), else a WARNING."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_infra.knowhow import Finding, Level
from gpu_infra.knowhow.node_software import driver_plan
from gpu_infra.nodeplan.plans import NodePlan, gpu_fleet_name


def node_tools_without_bucket(nodes: NodePlan) -> Iterable[Finding]:
    """At `storage.buckets.purposes` when it is empty and the fleet's nodes would get node
    tools: the message names what they go without. ERROR where the profile requires node
    tools (`node_tools_required`, prod: nodes without the GPU health check run jobs on faulty
    GPUs unnoticed), WARNING elsewhere."""
    cluster = nodes.cluster
    if cluster.storage.buckets.purposes != [] or driver_plan(cluster.fleet).route is None:
        return
    spec = nodes.bootstrap_spec(gpu_fleet_name(cluster.name))
    missing = (["the GPU health check after boot (so no GPU-health alarm either)"]
               if spec.gpu_health else [])
    missing += ["the elastic job launcher and spot watcher"] if spec.elastic else []
    missing += ["the drain's immediate hand-back of frames"] if spec.returns_jobs else []
    if not missing:
        return
    required = cluster.profile.node_tools_required
    must = f", which {cluster.environment} nodes must run" if required else ""
    example = (" (e.g. [checkpoints]: the node tools go in the checkpoints bucket, else the "
               "first)") if required else ""
    yield Finding("node-tools-without-bucket", Level.ERROR if required else Level.WARNING,
                  "storage.buckets.purposes",
                  f"no bucket holds the nodes' node tools, so they go without "
                  f"{', '.join(missing)}{must}; list at least one purpose{example}")


__all__ = ["node_tools_without_bucket"]
