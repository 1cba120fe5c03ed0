"""The review of a plan: the plan itself, its cost estimate and the policy verdicts, as
`gpu-infra plan` shows them (text, markdown, mermaid) and writes them (`--json`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_infra_policies.coverage import CoverageSummary, summarize
from gpu_infra_policies.rules import JUDGING_RULES, RuleSettings, Verdict, default_settings
from gpu_infra_tools.cost import CostProject, Estimate, estimate_plan, infracost_document
from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.review.policy import (
    BUDGET_RULE,
    as_policy_resource,
    check_plan,
    has_mandatory,
    with_stack_budget,
)


@dataclass(frozen=True)
class Review:
    """A plan with its cost and the policy rules' verdicts."""

    plan: Plan
    cost: Estimate
    verdicts: list[Verdict]
    budget_checked: bool = True
    """Whether the monthly-budget rule ran (False when the policy config disables it)."""

    @property
    def blocked(self) -> bool:
        """True if a mandatory policy violation blocks the plan."""
        return has_mandatory(self.verdicts)

    @property
    def coverage(self) -> CoverageSummary:
        """Which of the plan's resources a security rule reviewed."""
        return summarize([as_policy_resource(r) for r in self.plan.resources if r.custom],
                         JUDGING_RULES)

    def cost_document(self) -> dict[str, Any]:
        """The cost as Infracost JSON (one project: this stack, nothing exists yet)."""
        plan = self.plan
        return infracost_document([CostProject(plan.stack_name, plan.source, self.cost,
                                               plan.cluster.name)], "gpu-infra plan")

    def to_json(self) -> dict[str, Any]:
        """The full record written by `plan --json`: the plan, with the policy verdicts,
        the cost (Infracost JSON) and its `costDetails` after the findings."""
        record = self.plan.to_json()
        ordered: dict[str, Any] = {}
        for key, value in record.items():
            ordered[key] = value
            if key == "findings":
                ordered["policy"] = [verdict.to_json() for verdict in self.verdicts]
                ordered["policyCoverage"] = self.coverage.to_json()
                ordered["cost"] = self.cost_document()
                ordered["costDetails"] = self.cost.details()
        return ordered


def review(plan: Plan, settings: Mapping[str, RuleSettings] | None = None,
           base: Sequence[dict[str, Any]] = ()) -> Review:
    """Estimate the plan's cost, then run the policy rules (`settings`: levels and
    thresholds; default: the rules' defaults) with that estimate; `base` is the resources of
    the plan this one changes (`plan --against`; default none: everything is created)."""
    cost = estimate_plan(plan)
    effective = with_stack_budget(settings or default_settings(),
                                  plan.cluster.monthly_budget_cny)
    return Review(plan, cost, check_plan(plan, settings, cost, base),
                  effective[BUDGET_RULE].level != "disabled")


__all__ = ["Review", "review"]
