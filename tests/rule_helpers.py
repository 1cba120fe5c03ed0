"""Calling one policy rule in tests: its defaults merged with overrides."""

from __future__ import annotations

from gpu_infra_policies import types as t
from gpu_infra_policies.base import Context, Resource, ResourceRule, StackRule
from gpu_infra_policies.rules import RULES_BY_NAME

TAGS = {"CostCenter": "cc", "Owner": "me", "Project": "gpu-infra", "Environment": "dev"}
PROD = {**TAGS, "Environment": "prod"}


def messages(rule_name: str, resource: Resource, ctx: Context | None = None,
             **thresholds) -> list[str]:
    rule = RULES_BY_NAME[rule_name]
    assert isinstance(rule, ResourceRule)
    return list(rule.check(resource, {**rule.defaults, **thresholds}, ctx or Context()))


def stack_messages(rule_name: str, resources: list[Resource], ctx: Context | None = None,
                   **thresholds) -> list[tuple[str | None, str]]:
    rule = RULES_BY_NAME[rule_name]
    assert isinstance(rule, StackRule)
    return [(r.name if r else None, m) for r, m in
            rule.check(resources, {**rule.defaults, **thresholds}, ctx or Context())]


def sg_rule(**props) -> Resource:
    return Resource(t.SECURITY_GROUP_RULE, {"type": "ingress", "ipProtocol": "tcp", **props},
                    "rule")




def bucket(**props) -> Resource:
    """The OSS bucket `ckpt` (name, id and URN known)."""
    return Resource(t.BUCKET, {"bucket": "ckpt", **props}, "ckpt", "urn:bucket", id="ckpt")
