"""The policy rules (gpu_infra_policies) over an offline plan: the functions CrossGuard runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_infra.schema.environment import policy_demands
from gpu_infra.schema.registry import layout_placement, layouts_suited
from gpu_infra_policies.base import UNKNOWN, Context, EnforcementLevel, Resource
from gpu_infra_policies.rules import RuleSettings, Verdict, default_settings, evaluate
from gpu_infra_tools.plan.engine import UNKNOWN_MARK, Plan, PlannedResource


def _wire(value: Any) -> Any:
    """Plan inputs back in wire form: the plan's unknown mark becomes Pulumi's sentinel."""
    if isinstance(value, dict):
        return {key: _wire(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_wire(item) for item in value]
    return UNKNOWN if value == UNKNOWN_MARK else value


def as_policy_resource(resource: PlannedResource) -> Resource:
    """A planned resource as the rules see it."""
    return Resource(resource.type, _wire(resource.inputs), resource.name, resource.urn,
                    resource.protect, resource.id, tuple(resource.dependencies))


BUDGET_RULE = "monthly-budget"
BUDGET_LEVEL: EnforcementLevel = "advisory"
"""The budget rule's level when a stack budget turns it on and the config left it off."""


def with_stack_budget(settings: Mapping[str, RuleSettings],
                      budget: float | None) -> dict[str, RuleSettings]:
    """`settings` with the stack's budget as the monthly-budget rule's threshold, the rule
    on (advisory, unless the policy config set its level, "disabled" included); unchanged
    without a budget."""
    result = dict(settings)
    if budget is None:
        return result
    rule = result[BUDGET_RULE]
    level = rule.level if rule.level_configured else BUDGET_LEVEL
    result[BUDGET_RULE] = RuleSettings(level, {**rule.thresholds, "monthlyBudget": budget},
                                       rule.level_configured)
    return result


def check_plan(plan: Plan, settings: Mapping[str, RuleSettings] | None = None,
               monthly_cost: float | None = None) -> list[Verdict]:
    """Every enabled rule's violations over the plan's resources (defaults when `settings`
    is None); `monthly_cost` (default None: unknown) feeds the monthly-budget rule, which the
    stack's `monthly_budget_cny` turns on."""
    settings = with_stack_budget(settings or default_settings(),
                                 plan.cluster.monthly_budget_cny)
    gpu_types = plan.cluster.gpu_types
    context = Context(environment=plan.cluster.environment,
                      catalog=lambda instance_type: layouts_suited(instance_type, gpu_types),
                      demands=policy_demands, placement=layout_placement,
                      monthly_cost=monthly_cost)
    resources = [as_policy_resource(r) for r in plan.resources if r.custom]
    return evaluate(resources, settings, context)


def has_mandatory(verdicts: list[Verdict]) -> bool:
    """True if any verdict blocks the plan."""
    return any(verdict.level == "mandatory" for verdict in verdicts)
