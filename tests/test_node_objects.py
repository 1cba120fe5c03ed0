"""Case 2 of issue 35: the objects nodes fetch (the node tools) are never moved to Archive
by the stack's lifecycle rules, so a node that boots or reboots a year later still fetches
them (GetObject of an Archive object answers 403 InvalidObjectState until restored)."""

from __future__ import annotations

import pytest

from gpu_infra.blocks.bootstrap import NODE_OBJECTS_PREFIX

from .shipped import shipped_plan

COLD = {"Archive", "ColdArchive", "DeepColdArchive"}


def applies(rule: dict, key: str) -> bool:
    """Whether lifecycle rule `rule` (as planned) covers object `key`."""
    excluded = (rule.get("filter") or {}).get("not", {}).get("prefix")
    return key.startswith(rule.get("prefix", "")) and not (
        excluded and key.startswith(excluded))


@pytest.mark.slow  # plans shipped stacks
@pytest.mark.parametrize("stack", ["training-prod", "training-dev", "inference-prod",
                                   "rendering-batch"])
def test_no_rule_moves_or_expires_the_node_tools(stack):
    plan = shipped_plan(stack)
    buckets = {b.inputs["bucket"]: b for b in plan.by_type("alicloud:oss/bucket:Bucket")}
    tools = [o for o in plan.by_type("alicloud:oss/bucketObject:BucketObject")
             if o.name.endswith("-node-tools")]
    assert tools
    for tool in tools:
        key = tool.inputs["key"]
        assert key.startswith(NODE_OBJECTS_PREFIX)
        rules = buckets[tool.inputs["bucket"]].inputs["lifecycleRules"]
        if stack.startswith("training"):  # their node tools sit in the tiered checkpoints
            assert any(t["storageClass"] in COLD for r in rules
                       for t in r.get("transitions") or [])
        for rule in rules:
            if applies(rule, key):
                assert not rule.get("transitions") and not rule.get("expirations"), stack


def test_the_rule_still_tiers_everything_else():
    rule = {"prefix": "", "filter": {"not": {"prefix": NODE_OBJECTS_PREFIX}}}
    assert applies(rule, "checkpoints/step-100.pt")
    assert not applies(rule, f"{NODE_OBJECTS_PREFIX}node-tools/abc.sh")
