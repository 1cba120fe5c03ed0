"""Calling one policy rule in tests: its defaults merged with overrides."""

from __future__ import annotations

from dataclasses import replace

from gpu_infra.schema.environment import policy_demands
from gpu_infra.schema.registry import layout_placement
from gpu_infra_facts import types as t
from gpu_infra_policies.base import Context, Resource, ResourceRule, StackRule
from gpu_infra_policies.rules import RULES_BY_NAME

TAGS = {"CostCenter": "cc", "Owner": "me", "Project": "gpu-infra", "Environment": "dev"}
PROD = {**TAGS, "Environment": "prod"}


def with_profile(ctx: Context | None) -> Context:
    """`ctx` (default: an empty one) with the environment profile's demands and the layout
    registry's placements, as the pack and the plan pass them, unless it brings its own."""
    ctx = ctx or Context()
    if ctx.demands is None:
        ctx = replace(ctx, demands=policy_demands)
    return ctx if ctx.placement is not None else replace(ctx, placement=layout_placement)


def messages(rule_name: str, resource: Resource, ctx: Context | None = None,
             **thresholds) -> list[str]:
    rule = RULES_BY_NAME[rule_name]
    assert isinstance(rule, ResourceRule)
    return list(rule.check(resource, {**rule.defaults, **thresholds}, with_profile(ctx)))


def stack_messages(rule_name: str, resources: list[Resource], ctx: Context | None = None,
                   **thresholds) -> list[tuple[str | None, str]]:
    rule = RULES_BY_NAME[rule_name]
    assert isinstance(rule, StackRule)
    return [(r.name if r else None, m) for r, m in
            rule.check(resources, {**rule.defaults, **thresholds}, with_profile(ctx))]


def sg_rule(**props) -> Resource:
    return Resource(t.SECURITY_GROUP_RULE, {"type": "ingress", "ipProtocol": "tcp", **props},
                    "rule")




def bucket(**props) -> Resource:
    """The OSS bucket `ckpt` (name, id and URN known)."""
    return Resource(t.BUCKET, {"bucket": "ckpt", **props}, "ckpt", "urn:bucket", id="ckpt")
