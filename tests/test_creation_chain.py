"""bench/graph.py: creation levels and the longest chain a plan implies (no timing here)."""

from __future__ import annotations

from bench.graph import creation_levels, longest_chain
from gpu_infra_tools.plan.engine import Plan, PlannedResource

from .conftest import BASE_TRAINING, cluster_config


def resource(urn: str, custom: bool = True, parent: str | None = None,
             dependencies: tuple[str, ...] = ()) -> PlannedResource:
    return PlannedResource(urn=urn, type=f"t:{urn}", name=urn, custom=custom, parent=parent,
                           inputs={}, dependencies=list(dependencies))


def test_a_dependency_on_a_component_waits_for_everything_below_it():
    plan = Plan("p", "s", cluster_config(BASE_TRAINING), [
        resource("net", custom=False),
        resource("vpc", parent="net"),
        resource("vsw", parent="net", dependencies=("vpc",)),
        resource("sg", dependencies=("vpc",)),
        resource("node", dependencies=("net", "sg")),
        resource("alone"),
    ], {})
    assert creation_levels(plan) == {"vpc": 1, "vsw": 2, "sg": 2, "node": 3, "alone": 1}
    assert longest_chain(plan) in (["t:vpc", "t:vsw", "t:node"], ["t:vpc", "t:sg", "t:node"])


def test_training_chain_is_at_most_five_levels(plan_cluster):
    plan = plan_cluster(BASE_TRAINING)
    chain = longest_chain(plan)
    assert len(chain) == max(creation_levels(plan).values()) <= 5
    # the nodes wait for the network, their fleet's keys and the job tools' object in its
    # bucket: chains of the same length, so any of them may be the one reported
    assert chain[0] in ("alicloud:vpc/network:Network", "tls:index/privateKey:PrivateKey",
                        "alicloud:oss/bucket:Bucket")
