"""Cost rules: advisory by default."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.allowed import SPOT_STRATEGIES
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    number,
)

ALARM_METRIC_KEYS = {t.CMS_ALARM: "metric", t.CMS_GROUP_METRIC_RULE: "metricName"}
FLEET_TYPES = (t.INSTANCE, t.SCALING_GROUP, t.SCALING_CONFIGURATION)
BUDGET_SCHEMA = {"monthlyBudget": {"type": "number", "minimum": 0,
                                   "description": "Budget per month in CNY. Default none."}}
"""The threshold of the budget rules (the offline plan sets it from monthly_budget_cny)."""


def required_tags(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """Taggable resources carry every tag in `requiredTags` (unknown tags: skipped)."""
    if resource.type not in t.TAGGABLE or is_unknown(resource.props.get("tags")):
        return
    missing = [key for key in cfg["requiredTags"] if key not in resource.tags()]
    if missing:
        yield f"missing tags: {', '.join(missing)}"


def spot_price_cap(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """SpotWithPriceLimit needs a positive cap (spotPriceLimit on instances,
    spotPriceLimits on scaling configurations); SpotAsPriceGo needs none."""
    props = resource.props
    if props.get("spotStrategy") != "SpotWithPriceLimit":
        return
    if resource.type == t.INSTANCE:
        limit = props.get("spotPriceLimit")
        if not is_unknown(limit) and not (number(limit) or 0) > 0:
            yield "spotStrategy SpotWithPriceLimit without a spotPriceLimit above 0"
    elif resource.type == t.SCALING_CONFIGURATION:
        limits = props.get("spotPriceLimits")
        capped = [item for item in as_list(limits) if isinstance(item, Mapping)
                  and (is_unknown(item.get("priceLimit")) or (number(item.get("priceLimit"))
                                                              or 0) > 0)]
        if not is_unknown(limits) and not capped:
            yield "spotStrategy SpotWithPriceLimit without spotPriceLimits above 0"


def _watches_idle(metric: Any, cfg: Mapping[str, Any]) -> bool:
    return isinstance(metric, str) and any(part in metric for part in cfg["idleMetrics"])


def _covered_by_alarm(members: list[Resource], alarm: Resource, fleet: str,
                      cfg: Mapping[str, Any]) -> bool:
    if alarm.tags().get(cfg["fleetTagKey"]) == fleet:
        return True
    dimensions = alarm.props.get("metricDimensions") or alarm.props.get("dimensions")
    return any(member.urn in alarm.dependencies
               or (member.id and isinstance(dimensions, str) and member.id in dimensions)
               for member in members)


def _covered_by_tag_group(group: Resource, fleet: str, resources: Sequence[Resource],
                          cfg: Mapping[str, Any]) -> bool:
    if group.props.get("tagKey") != cfg["fleetTagKey"]:
        return False
    if not any(isinstance(m, Mapping) and m.get("tagValue") == fleet
               and m.get("tagValueMatchFunction", "equals") == "equals"
               for m in as_list(group.props.get("matchExpresses"))):
        return False
    templates = as_list(group.props.get("templateIdLists"))
    return any(
        template.type == t.CMS_METRIC_RULE_TEMPLATE
        and any(group.refers_to(template, ref) for ref in templates or [None])
        and any(isinstance(a, Mapping) and _watches_idle(a.get("metricName"), cfg)
                for a in as_list(template.props.get("alertTemplates")))
        for template in resources)


def gpu_idle_alarm(resources: Sequence[Resource], cfg: Mapping[str, Any],
                   _: Context) -> Iterator[tuple[Resource | None, str]]:
    """Every GPU fleet (instances / scaling groups tagged `fleetTagKey`) has an idle alarm:
    a cms.Alarm or cms.GroupMetricRule on an `idleMetrics` metric tagged with the fleet or
    bound to its instances, or a cms.DynamicTagGroup on the fleet tag applying a
    cms.MetricRuleTemplate with such a metric."""
    fleets: dict[str, list[Resource]] = {}
    for resource in resources:
        fleet = resource.tags().get(cfg["fleetTagKey"]) if resource.type in FLEET_TYPES else None
        if isinstance(fleet, str) and not is_unknown(fleet):
            fleets.setdefault(fleet, []).append(resource)
    alarms = [r for r in resources if r.type in ALARM_METRIC_KEYS
              and _watches_idle(r.props.get(ALARM_METRIC_KEYS[r.type]), cfg)]
    groups = [r for r in resources if r.type == t.CMS_DYNAMIC_TAG_GROUP]
    for fleet, members in fleets.items():
        if not (any(_covered_by_alarm(members, alarm, fleet, cfg) for alarm in alarms)
                or any(_covered_by_tag_group(g, fleet, resources, cfg) for g in groups)):
            yield members[0], (f"GPU fleet {fleet} has no GPU-idle alarm "
                               f"({' / '.join(cfg['idleMetrics'])})")


def monthly_budget(_: Sequence[Resource], cfg: Mapping[str, Any],
                   ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """The stack's estimated monthly cost stays within `monthlyBudget` (no verdict without
    both an estimate and a budget)."""
    budget = number(cfg.get("monthlyBudget"))
    if budget is not None and ctx.monthly_cost is not None and ctx.monthly_cost > budget:
        yield None, f"estimated monthly cost {ctx.monthly_cost:,.0f} exceeds budget {budget:,.0f}"


def budget_unpriced_gpus(resources: Sequence[Resource], cfg: Mapping[str, Any],
                         ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """A stack with `monthlyBudget` has a price for every GPU instance it plans: an unknown
    price is never within budget."""
    budget = number(cfg.get("monthlyBudget"))
    if budget is None:
        return
    by_name = {resource.name: resource for resource in resources}
    for name, what in ctx.unpriced_gpus:
        yield by_name.get(name), (f"{what} without a price: the budget of {budget:,.0f} "
                                  "cannot be judged while they are left out of the estimate")


def _on_demand_part(size: float, spot: bool, base: float | None,
                    percentage: float | None) -> float:
    """Instances of a fleet of `size` that are not spot: all without spot, else the base
    and `percentage` (default 100) of the rest."""
    if not spot:
        return size
    base = min(base or 0.0, size)
    share = 100.0 if percentage is None else percentage
    return base + math.ceil((size - base) * share / 100)


def on_demand_capacity(resources: Sequence[Resource]) -> dict[str, float]:
    """Instance type -> the most instances of it the planned fleets run that are not spot
    (a reservation covers those only): ecs instances, ESS groups at max size with their
    active configuration's types, ACK node pools at their autoscaler's max size or desired
    size. A fleet of several types counts in full for each."""
    configs = [r for r in resources if r.type == t.SCALING_CONFIGURATION
               and r.props.get("active", True) is not False]
    usable: defaultdict[str, float] = defaultdict(float)
    for resource in resources:
        props = resource.props
        fleet: Mapping[str, Any]
        if resource.type == t.INSTANCE:
            spot = props.get("spotStrategy") in SPOT_STRATEGIES
            types, size, fleet = [props.get("instanceType")], 0.0 if spot else 1.0, {}
        elif resource.type == t.SCALING_GROUP:
            config = next((c for c in configs
                           if c.refers_to(resource, c.props.get("scalingGroupId"))), None)
            if config is None:
                continue
            fleet = {**props, "spotStrategy": config.props.get("spotStrategy")}
            types = as_list(config.props.get("instanceTypes")) or [
                config.props.get("instanceType")]
            size = number(props.get("maxSize")) or 0.0
        elif resource.type == t.NODE_POOL:
            scaling = props.get("scalingConfig")
            autoscaled = isinstance(scaling, Mapping) and scaling.get("enable") is not False
            size = (number(scaling.get("maxSize")) if isinstance(scaling, Mapping) and autoscaled
                    else number(props.get("desiredSize")) or number(props.get("nodeCount"))
                    ) or 0.0
            types, fleet = as_list(props.get("instanceTypes")), props
        else:
            continue
        part = _on_demand_part(size, fleet.get("spotStrategy") in SPOT_STRATEGIES,
                               number(fleet.get("onDemandBaseCapacity")),
                               number(fleet.get("onDemandPercentageAboveBaseCapacity")))
        for kind in {kind for kind in types if isinstance(kind, str)}:
            usable[kind] += part
    return usable


def reserved_capacity_excess(resources: Sequence[Resource], _: Mapping[str, Any],
                             ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """A reservation (reserved instances, elasticity assurance, capacity reservation) that
    this plan creates or grows holds no more instances than the planned fleets run on
    demand. One that already held as many before is left to the validator's WARNING (a
    fleet shrunk under it); with no base known (CrossGuard) the rule says nothing."""
    if ctx.reservations_before is None:
        return
    usable = on_demand_capacity(resources)
    for resource in resources:
        if resource.type not in t.RESERVATIONS:
            continue
        amount = number(resource.props.get("instanceAmount"))
        kind = resource.props.get("instanceType")
        before = ctx.reservations_before.get(resource.name)
        if amount is None or not isinstance(kind, str) or amount <= usable.get(kind, 0.0) or (
                before is not None and amount <= before):
            continue
        how = "creates it" if before is None else f"grows it from {before:g}"
        fits = usable.get(kind, 0.0)
        yield resource, (f"instanceAmount {amount:g} of {kind}, but the planned fleets run "
                         f"at most {fits:g} of it that are not spot: this plan {how}, "
                         f"and the {amount - fits:g} idle are paid for all the same "
                         "(reserved instances and elasticity assurances for their whole "
                         f"term, non-refundable); reserve at most {fits:g}")


COST_RULES: tuple[Rule, ...] = (
    ResourceRule("required-tags", "Taggable resources carry the cost allocation tags", "cost",
                 "low", "Add the missing keys under the stack's `tags:` (Project and "
                 "Environment are added automatically).", required_tags, concern="cost",
                 reviews=t.TAGGABLE,
                 schema={"requiredTags": {"type": "array", "items": {"type": "string"},
                                          "description": "Tag keys every taggable resource needs. "
                                                         "Default CostCenter, Owner, Project, "
                                                         "Environment."}},
                 defaults={"requiredTags": ["CostCenter", "Owner", "Project", "Environment"]}),
    ResourceRule("spot-price-cap", "Spot instances have a price cap or follow the market price",
                 "cost", "medium", "Use spotStrategy SpotAsPriceGo, or set a positive "
                 "spotPriceLimit / spotPriceLimits.", spot_price_cap, concern="cost",
                 reviews=frozenset({t.INSTANCE, t.SCALING_CONFIGURATION})),
    StackRule("gpu-idle-alarm", "Every GPU fleet has a GPU-idle alarm", "cost", "medium",
              "Enable the gpu_idle alarm in the stack's monitoring section.", gpu_idle_alarm,
                 concern="cost",
                 reviews=frozenset({*FLEET_TYPES, *ALARM_METRIC_KEYS, t.CMS_DYNAMIC_TAG_GROUP,
                                    t.CMS_METRIC_RULE_TEMPLATE}),
              schema={"idleMetrics": {"type": "array", "items": {"type": "string"},
                                      "description": "Substrings of metric names that count "
                                                     "as GPU utilisation. Default "
                                                     "gpu_gpu_usedutilization, "
                                                     "gpu_usedutilization."},
                      "fleetTagKey": {"type": "string",
                                      "description": "Tag naming a GPU fleet. Default GpuFleet."}},
              defaults={"idleMetrics": ["gpu_gpu_usedutilization", "gpu_usedutilization"],
                        "fleetTagKey": "GpuFleet"}),
    StackRule("monthly-budget", "Estimated monthly cost within the stack's budget", "cost",
              "medium", "Reduce nodes, use spot, or raise monthlyBudget.", monthly_budget,
                 concern="cost",
                 reviews=frozenset(),
              enforcement="disabled",
              schema=BUDGET_SCHEMA,
              note="disabled by default: CrossGuard has no cost estimate to judge; the offline "
                   "plan turns it on (advisory) for stacks that set monthly_budget_cny"),
    StackRule("budget-unpriced-gpus", "Every GPU instance of a budgeted stack has a price",
              "cost", "high", "Price the type (live prices, or a catalog price), or choose a "
              "priced type; set this rule advisory to accept the lower bound.",
              budget_unpriced_gpus, concern="cost",
              reviews=frozenset({t.INSTANCE, t.SCALING_GROUP, t.NODE_POOL, *t.RESERVATIONS}),
              enforcement="disabled",
              schema=BUDGET_SCHEMA,
              note="disabled by default: CrossGuard has no cost estimate; the offline plan "
                   "turns it on (mandatory) for stacks that set monthly_budget_cny"),
    StackRule("reserved-capacity-excess", "Reservations bought or grown fit the fleet",
              "cost", "high", "Lower the reservation's count to the fleet's on-demand nodes, "
              "or grow the fleet first.", reserved_capacity_excess, concern="cost",
              reviews=t.RESERVATIONS, enforcement="mandatory",
              note="judges only where the base is known (the offline plan; against --against "
                   "or, without one, everything is bought now); under CrossGuard it says "
                   "nothing"),
)
