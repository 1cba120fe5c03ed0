"""The node tools need a bucket: every ECS fleet's nodes fetch their bootstrap steps and their
workloads (blocks.bootstrap node_tools_files) from one of the stack's buckets, as the user
data has room only for the loader (its settings, the node library and the cloud client). A
stack that lists no bucket purpose would have to carry the whole bootstrap in the user data
(about 62% of ECS's 32 KB limit, with no room for what later releases add) and its nodes would
run no workload: the ERROR `node-tools-without-bucket`, in every environment."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_infra.knowhow import Finding, Level
from gpu_infra.knowhow.node_software import driver_plan
from gpu_infra.nodeplan.plans import NodePlan, gpu_fleet_name


def node_tools_without_bucket(nodes: NodePlan) -> Iterable[Finding]:
    """ERROR at `storage.buckets.purposes` when it is empty and the fleet's nodes boot
    gpu-infra's bootstrap: the message names what the node tools would have brought."""
    cluster = nodes.cluster
    if cluster.storage.buckets.purposes != [] or driver_plan(cluster.fleet).route is None:
        return
    spec = nodes.bootstrap_spec(gpu_fleet_name(cluster.name))
    brought = ["the bootstrap steps (the user data has room only for their loader)"]
    brought += ["the GPU health check after boot"] if spec.gpu_health else []
    brought += ["the elastic job launcher"] if spec.elastic else []
    brought += ["the spot watcher"] if spec.spot_watch else []
    brought += ["the render worker"] if spec.render_worker else []
    brought += ["the drain's immediate hand-back of frames"] if spec.returns_jobs else []
    yield Finding("node-tools-without-bucket", Level.ERROR, "storage.buckets.purposes",
                  f"no bucket holds the nodes' node tools: {', '.join(brought)}; list at "
                  "least one purpose (e.g. [checkpoints]: the node tools go in the "
                  "checkpoints bucket, else the first)")


__all__ = ["node_tools_without_bucket"]
