"""Every policy rule, and one function that runs them all over a list of resources.

Used by the offline plan (gpu_infra_tools.review.policy); the CrossGuard adapter
(crossguard.py) wraps the same rules: a ResourceRule as a ResourceValidationPolicy, a
StackRule as a StackValidationPolicy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpu_infra_policies.audit import AUDIT_RULES
from gpu_infra_policies.base import (
    Context,
    EnforcementLevel,
    Resource,
    Rule,
    StackRule,
    stack_environment,
)
from gpu_infra_policies.cost import COST_RULES
from gpu_infra_policies.coverage import UNREVIEWED_RULE, unreviewed
from gpu_infra_policies.gpu import GPU_RULES
from gpu_infra_policies.iam import IAM_RULES
from gpu_infra_policies.kubernetes import KUBERNETES_RULES
from gpu_infra_policies.network import NETWORK_RULES
from gpu_infra_policies.nodes import NODE_RULES
from gpu_infra_policies.reliability import RELIABILITY_RULES
from gpu_infra_policies.secrets import SECRET_RULES
from gpu_infra_policies.storage import STORAGE_RULES
from gpu_infra_policies.transport import TRANSPORT_RULES

JUDGING_RULES: tuple[Rule, ...] = (NETWORK_RULES + TRANSPORT_RULES + NODE_RULES + STORAGE_RULES
                                   + IAM_RULES + SECRET_RULES + AUDIT_RULES + KUBERNETES_RULES
                                   + RELIABILITY_RULES + COST_RULES + GPU_RULES)
"""Every rule that judges resources, in report order."""
COVERAGE_RULE = StackRule(
    UNREVIEWED_RULE, "Every resource type in the stack is reviewed by a security rule",
    "security", "low", "Review these resources by hand, or add a rule (or a NO_CONCERN entry "
    "with its reason) to gpu_infra_policies.", unreviewed(JUDGING_RULES), concern="coverage",
    reviews=frozenset(), enforcement="advisory",
    note="advisory: it reports what the pack did not look at, not a fault")
RULES: tuple[Rule, ...] = (*JUDGING_RULES, COVERAGE_RULE)
"""All rules, in report order."""
RULES_BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES}


@dataclass(frozen=True)
class RuleSettings:
    """How one rule runs: its level and thresholds (defaults merged with the config)."""

    level: EnforcementLevel
    thresholds: Mapping[str, Any]
    level_configured: bool = False
    """True when the policy config set the level (so a default may not override it)."""


def default_settings() -> dict[str, RuleSettings]:
    """Every rule at its default level with its default thresholds."""
    return {rule.name: RuleSettings(rule.default_enforcement, dict(rule.defaults))
            for rule in RULES}


@dataclass(frozen=True)
class Verdict:
    """One violation of one rule."""

    rule: str
    level: EnforcementLevel
    severity: str
    category: str
    message: str
    resource_type: str | None = None
    resource_name: str | None = None

    def line(self) -> str:
        """`MANDATORY no-world-ingress (critical): type name: message`."""
        where = f"{self.resource_type} {self.resource_name}: " if self.resource_type else ""
        return f"{self.level.upper()} {self.rule} ({self.severity}): {where}{self.message}"

    def to_json(self) -> dict[str, Any]:
        """The JSON form in `plan --json`."""
        return {"rule": self.rule, "level": self.level, "severity": self.severity,
                "category": self.category, "resourceType": self.resource_type,
                "resourceName": self.resource_name, "message": self.message}


def evaluate(resources: Sequence[Resource], settings: Mapping[str, RuleSettings] | None = None,
             context: Context | None = None) -> list[Verdict]:
    """Run every enabled rule over `resources`; violations in rule order. A context without
    an environment judges resources without tags by the one the others' tags agree on
    (Context.tagged_environment)."""
    settings = settings or default_settings()
    context = context or Context()
    if context.environment is None:
        context = replace(context, tagged_environment=stack_environment(resources))
    verdicts: list[Verdict] = []
    for rule in RULES:
        setting = settings[rule.name]
        if setting.level == "disabled":
            continue
        level = setting.level if setting.level_configured \
            else rule.level_in(context, setting.level)
        verdicts += [Verdict(rule.name, level, rule.severity, rule.category, message,
                             resource.type if resource else None,
                             resource.name if resource else None)
                     for resource, message
                     in rule.violations(resources, setting.thresholds, context)]
    return verdicts
