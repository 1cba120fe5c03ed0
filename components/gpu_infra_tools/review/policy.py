"""The policy rules (gpu_infra_policies) over an offline plan: the functions CrossGuard runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpu_infra.schema.environment import policy_demands
from gpu_infra.schema.registry import layout_placement, layouts_suited
from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Context, EnforcementLevel, Resource
from gpu_infra_policies.rules import RuleSettings, Verdict, default_settings, evaluate
from gpu_infra_tools.cost import Estimate
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
UNPRICED_RULE = "budget-unpriced-gpus"
BUDGET_LEVELS: dict[str, EnforcementLevel] = {BUDGET_RULE: "advisory", UNPRICED_RULE: "mandatory"}
"""The budget rules' levels when a stack budget turns them on and the config left them off:
over budget is advisory, GPUs without a price fail the plan (an unknown price is never
within budget)."""


def with_stack_budget(settings: Mapping[str, RuleSettings],
                      budget: float | None) -> dict[str, RuleSettings]:
    """`settings` with the stack's budget as the budget rules' threshold, the rules on
    (BUDGET_LEVELS, unless the policy config set their level, "disabled" included);
    unchanged without a budget."""
    result = dict(settings)
    if budget is None:
        return result
    for name, default in BUDGET_LEVELS.items():
        rule = result[name]
        result[name] = RuleSettings(rule.level if rule.level_configured else default,
                                    {**rule.thresholds, "monthlyBudget": budget},
                                    rule.level_configured)
    return result


def reservations_in(resources: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Reservation name -> its instanceAmount, in plan records (a base's `resources`)."""
    amounts: dict[str, float] = {}
    for record in resources:
        amount = (record.get("inputs") or {}).get("instanceAmount")
        if record.get("type") in t.RESERVATIONS and isinstance(amount, int | float):
            amounts[str(record.get("name"))] = float(amount)
    return amounts


def check_plan(plan: Plan, settings: Mapping[str, RuleSettings] | None = None,
               cost: Estimate | None = None,
               base: Sequence[dict[str, Any]] = ()) -> list[Verdict]:
    """Every enabled rule's violations over the plan's resources (defaults when `settings`
    is None). `cost` (default none: unknown) feeds the budget rules, which the stack's
    `monthly_budget_cny` turns on; `base` (the resources of the plan this one changes;
    default none: everything is created) tells reservations bought now from those that
    exist."""
    settings = with_stack_budget(settings or default_settings(),
                                 plan.cluster.monthly_budget_cny)
    gpu_types = plan.cluster.gpu_types
    context = Context(environment=plan.cluster.environment,
                      catalog=lambda instance_type: layouts_suited(instance_type, gpu_types),
                      demands=policy_demands, placement=layout_placement,
                      monthly_cost=None if cost is None else cost.total_monthly_cost,
                      unpriced_gpus=[] if cost is None else [
                          (c.resource, c.line()) for c in cost.unpriced_capacity(
                              gpus_only=True)],
                      reservations_before=reservations_in(base))
    resources = [as_policy_resource(r) for r in plan.resources if r.custom]
    return evaluate(resources, settings, context)


def has_mandatory(verdicts: list[Verdict]) -> bool:
    """True if any verdict blocks the plan."""
    return any(verdict.level == "mandatory" for verdict in verdicts)
