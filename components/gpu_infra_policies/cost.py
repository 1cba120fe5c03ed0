"""Cost rules: advisory by default."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
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
              schema={"monthlyBudget": {"type": "number", "minimum": 0,
                                        "description": "Budget per month in CNY. Default none."}},
              note="disabled by default: CrossGuard has no cost estimate to judge; the offline "
                   "plan turns it on (advisory) for stacks that set monthly_budget_cny"),
)
