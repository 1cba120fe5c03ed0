"""Node plans: what a fleet's nodes get, from the stack alone and without Pulumi (plans),
and what only they can tell of a stack before anything is built (user_data: ECS's user-data
limit). `validate` judges a stack with them; the layouts build their fleets from them."""

from __future__ import annotations

from gpu_infra.knowhow import Finding, run_validators
from gpu_infra.nodeplan.plans import AckNodes, NodePlan, SpotWorkers, TrainingNodes, node_plan
from gpu_infra.nodeplan.tools import node_tools_without_bucket
from gpu_infra.nodeplan.user_data import user_data_too_large
from gpu_infra.schema import ClusterConfig


def judge_stack(cluster: ClusterConfig) -> list[Finding]:
    """Every finding for `cluster`: the validators' (knowhow.run_validators), then what only
    its node plan can tell, for fleets whose nodes boot our bootstrap (the
    user-data-too-large and node-tools-without-bucket ERRORs)."""
    findings = run_validators(cluster)
    nodes = node_plan(cluster)
    if nodes is not None and nodes.BOOTSTRAPS:
        for part in nodes.parts():
            findings += user_data_too_large(part)
        findings += node_tools_without_bucket(nodes)
    return findings


__all__ = ["AckNodes", "NodePlan", "SpotWorkers", "TrainingNodes", "judge_stack", "node_plan"]
