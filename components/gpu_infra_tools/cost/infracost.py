"""Estimates as Infracost JSON (output format version 0.2, the file `infracost breakdown
--format json` writes and `infracost output` / `infracost comment` read): one project per
stack, decimals as strings, `priceNotFound` per cost component, `summary` counts.

Follows Infracost's own output code (internal/output/output.go, internal/schema/diff.go of
infracost/infracost): free resources (no price) and resources without a price model
(unsupported) are not in `breakdown.resources` but counted in `summary`; `pastBreakdown` is
the baseline (empty without one, as for a new Terraform project) and `diff` holds the resources
whose cost components changed, each component as current minus past; resources are sorted by
monthly cost, highest first, then by name.

Where our own fields go (the format is closed everywhere else): `resources[].metadata`, an
open object, holds the building block (`component`), the estimate's note, which prices are
UNCONFIRMED, the GPU capacity lines, and in `diff` whether a resource was added, removed or
changed. Stack-wide figures (GPU split, cost per building block, assumptions) are in
`Estimate.details()`, which `plan --json` writes next to the document as `costDetails`.

Where we differ from Infracost, on purpose: a cost whose price is unknown is null, not 0
(Infracost prices a missing price at 0; a diff, like Infracost's, counts a null as 0, so the
diff totals are the differences of the totals of known costs); `totalMonthlyUsageCost` is
null (usage-based charges are not estimated); past and current resources pair by type and by
name without the cluster-name prefix, so two clusters compare resource by resource.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from gpu_infra_tools.cost.compare import pair_resources
from gpu_infra_tools.cost.model import CostComponent, Estimate, ResourceCost

OUTPUT_VERSION = "0.2"
PROJECT_TYPE = "gpu_infra_offline_plan"
"""`projects[].metadata.type` (Infracost's are e.g. terraform_dir, terraform_plan_json)."""
NO_TIME = "0001-01-01T00:00:00Z"
"""What Infracost writes for an unknown commit time (Go's zero time)."""
PLACES = Decimal("0.00000001")
"""Amounts are rounded to 8 decimal places."""
ZERO = Decimal(0)
_LABELS = re.compile(r"(.*?)\s*\((.*?)\)")


@dataclass(frozen=True)
class CostProject:
    """One stack of an Infracost document: its estimate and, for a diff, the baseline."""

    name: str
    """The stack name (`projects[].name` and `displayName`)."""
    path: str
    """The stack file."""
    estimate: Estimate
    cluster: str = ""
    """The cluster name: the prefix of the resource names, ignored when pairing with past."""
    past: Estimate | None = None
    """The baseline (a base revision, or another stack); None: nothing exists yet."""
    past_cluster: str = ""


def infracost_document(projects: Sequence[CostProject], command: str,
                       generated: datetime | None = None) -> dict[str, Any]:
    """The Infracost JSON of `projects`; `command` is recorded as `metadata.infracostCommand`,
    `generated` (default: now) as `timeGenerated`."""
    built = [_project(project) for project in projects]
    currency = projects[0].estimate.currency if projects else "CNY"

    def total(part: str, key: str) -> str | None:
        return _text(_sum(_amount_of(project[part][key]) for project in built))

    return {
        "version": OUTPUT_VERSION,
        "metadata": {"infracostCommand": command, "vcsBranch": "", "vcsCommitSha": "",
                     "vcsCommitAuthorName": "", "vcsCommitAuthorEmail": "",
                     "vcsCommitTimestamp": NO_TIME, "vcsCommitMessage": ""},
        "currency": currency,
        "projects": built,
        "totalHourlyCost": total("breakdown", "totalHourlyCost"),
        "totalMonthlyCost": total("breakdown", "totalMonthlyCost"),
        "totalMonthlyUsageCost": None,
        "pastTotalHourlyCost": total("pastBreakdown", "totalHourlyCost"),
        "pastTotalMonthlyCost": total("pastBreakdown", "totalMonthlyCost"),
        "pastTotalMonthlyUsageCost": None,
        "diffTotalHourlyCost": total("diff", "totalHourlyCost"),
        "diffTotalMonthlyCost": total("diff", "totalMonthlyCost"),
        "diffTotalMonthlyUsageCost": None,
        "timeGenerated": (generated or datetime.now(timezone.utc)).astimezone(
            timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "summary": _merged_summaries([project["summary"] for project in built]),
    }


def _project(project: CostProject) -> dict[str, Any]:
    past = project.past
    pairs = pair_resources(past.resources if past else [], project.estimate.resources,
                           project.past_cluster, project.cluster)
    diffs = [diff for was, now in pairs if (diff := _diff_resource(was, now)) is not None]
    return {
        "name": project.name, "displayName": project.name,
        "metadata": {"path": project.path, "type": PROJECT_TYPE},
        "pastBreakdown": _breakdown([_resource(r) for r in past.resources if _supported(r)]
                                    if past else []),
        "breakdown": _breakdown([_resource(r) for r in project.estimate.resources
                                 if _supported(r)]),
        "diff": _breakdown(diffs),
        "summary": _summary(project.estimate),
    }


def _supported(resource: ResourceCost) -> bool:
    """Priced by a model (Infracost lists these; free and unsupported ones only count)."""
    return not resource.free and bool(resource.components)


def _breakdown(resources: list[dict[str, Any]]) -> dict[str, Any]:
    resources.sort(key=lambda r: (r["monthlyCost"] is None,
                                  -Decimal(r["monthlyCost"] or "0"), r["name"]))
    return {"resources": resources,
            "totalHourlyCost": _text(_sum(_amount_of(r["hourlyCost"]) for r in resources)),
            "totalMonthlyCost": _text(_sum(_amount_of(r["monthlyCost"]) for r in resources)),
            "totalMonthlyUsageCost": None}


def _resource(resource: ResourceCost) -> dict[str, Any]:
    metadata: dict[str, Any] = {"component": resource.component}
    if resource.note:
        metadata["note"] = resource.note
    unconfirmed = [c.name for c in resource.components if c.unconfirmed]
    if unconfirmed:
        metadata["unconfirmedPrices"] = unconfirmed
    if resource.gpu:
        metadata["gpu"] = [{"instanceType": slot.instance_type, "capacity": slot.capacity,
                            "count": slot.count, "paidHourly": _text(_amount(slot.paid_hourly)),
                            "onDemandHourly": _text(_amount(slot.on_demand_hourly))}
                           for slot in resource.gpu]
    return {"name": resource.name, "resourceType": resource.resource_type,
            "metadata": metadata, "hourlyCost": _text(_amount(resource.hourly_cost)),
            "monthlyCost": _text(_amount(resource.monthly_cost)),
            "costComponents": [_component(c) for c in resource.components]}


def _quantities(component: CostComponent) -> tuple[Decimal | None, Decimal | None]:
    """(hourly, monthly) quantity: Infracost writes both, one derived from the other."""
    quantity = component.quantity
    if quantity is None:
        return None, None
    hours = component.hours_per_month
    if component.period == "hour":
        return _amount(quantity), _amount(quantity * hours)
    return _amount(quantity / hours), _amount(quantity)


def _component_amounts(component: CostComponent) -> dict[str, Decimal | None]:
    hourly_quantity, monthly_quantity = _quantities(component)
    return {"hourlyQuantity": hourly_quantity, "monthlyQuantity": monthly_quantity,
            "price": _amount(component.price) if component.price is not None else ZERO,
            "hourlyCost": _amount(component.hourly_cost),
            "monthlyCost": _amount(component.monthly_cost)}


def _component(component: CostComponent) -> dict[str, Any]:
    amounts = _component_amounts(component)
    return {"name": component.name, "unit": component.unit,
            **{key: _text(value) for key, value in amounts.items()},
            "usageBased": component.usage_based,
            "priceNotFound": component.price is None}


def _diff_component(was: CostComponent | None, now: CostComponent | None
                    ) -> dict[str, Any] | None:
    """Current minus past (an absent side or a null counts 0), or None if nothing
    changed."""
    base = now or was
    assert base is not None
    past = _component_amounts(was) if was else dict.fromkeys(_AMOUNT_KEYS, ZERO)
    current = _component_amounts(now) if now else dict.fromkeys(_AMOUNT_KEYS, ZERO)
    deltas = {key: _minus(current[key], past[key]) for key in _AMOUNT_KEYS}
    if not any(deltas.values()):
        return None
    return {"name": _diff_name(now.name if now else "", was.name if was else ""),
            "unit": base.unit, **{key: _text(value) for key, value in deltas.items()},
            "usageBased": base.usage_based,
            "priceNotFound": base.price is None}


_AMOUNT_KEYS = ("hourlyQuantity", "monthlyQuantity", "price", "hourlyCost", "monthlyCost")


def _diff_resource(was: ResourceCost | None, now: ResourceCost | None
                   ) -> dict[str, Any] | None:
    """The change of one resource's cost components, or None if none changed."""
    past = was.components if was and _supported(was) else []
    current = now.components if now and _supported(now) else []
    components = [diff for old, new in _pair_components(past, current)
                  if (diff := _diff_component(old, new)) is not None]
    if not components:
        return None
    base = now or was
    assert base is not None
    status = "changed" if was and now else "added" if now else "removed"

    def delta(attribute: str) -> str | None:
        before = _amount(getattr(was, attribute)) if past else ZERO
        after = _amount(getattr(now, attribute)) if current else ZERO
        return _text(_minus(after, before))

    return {"name": base.name, "resourceType": base.resource_type,
            "metadata": {"component": base.component, "change": status},
            "hourlyCost": delta("hourly_cost"), "monthlyCost": delta("monthly_cost"),
            "costComponents": components}


def _pair_components(past: list[CostComponent], current: list[CostComponent]
                     ) -> list[tuple[CostComponent | None, CostComponent | None]]:
    """Past components with their match (same name, else same name before the brackets),
    then the current ones left over, in order (Infracost's diffCostComponentsByResource)."""
    left = list(current)
    pairs: list[tuple[CostComponent | None, CostComponent | None]] = []
    for old in past:
        match = next((c for c in left if c.name == old.name), None) or next(
            (c for c in left if " (" in c.name and " (" in old.name
             and c.name.split(" (")[0] == old.name.split(" (")[0]), None)
        if match is not None:
            left.remove(match)
        pairs.append((old, match))
    return pairs + [(None, new) for new in left]


def _diff_name(current: str, past: str) -> str:
    """`Instance (a, b → c)` for `Instance (a, c)` after `Instance (a, b)` (Infracost's
    diffName): labels in brackets that changed show as `old → new`."""
    if not current or not past:
        return current or past
    now, was = _LABELS.match(current), _LABELS.match(past)
    if now is None or was is None:
        return current
    new_labels, old_labels = now.group(2).split(", "), was.group(2).split(", ")
    if len(new_labels) != len(old_labels):
        return f"{now.group(1)} ({was.group(2)}) → ({now.group(2)})"
    labels = [new if new == old else f"{old} → {new}"
              for new, old in zip(new_labels, old_labels, strict=True)]
    return f"{now.group(1)} ({', '.join(labels)})"


def _summary(estimate: Estimate) -> dict[str, Any]:
    free = [r for r in estimate.resources if r.free]
    unsupported = [r for r in estimate.resources if not r.free and not r.components]
    return {
        "totalDetectedResources": len(estimate.resources),
        "totalSupportedResources": len(estimate.resources) - len(free) - len(unsupported),
        "totalUnsupportedResources": len(unsupported),
        "totalUsageBasedResources": len({r.name for r, _ in estimate.usage_based}),
        "totalNoPriceResources": len(free),
        "unsupportedResourceCounts": dict(sorted(Counter(
            r.resource_type for r in unsupported).items())),
        "noPriceResourceCounts": dict(sorted(Counter(r.resource_type for r in free).items())),
    }


def _merged_summaries(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for summary in summaries:
        for key, value in summary.items():
            if isinstance(value, dict):
                counts = Counter(merged.get(key, {}))
                counts.update(value)
                merged[key] = dict(sorted(counts.items()))
            else:
                merged[key] = merged.get(key, 0) + value
    return merged


def _amount(value: float | None) -> Decimal | None:
    return None if value is None else Decimal(repr(value)).quantize(PLACES)


def _amount_of(text: str | None) -> Decimal | None:
    return None if text is None else Decimal(text)


def _minus(after: Decimal | None, before: Decimal | None) -> Decimal:
    """after - before, a null counting 0 (Infracost's diffDecimals)."""
    return (after or ZERO) - (before or ZERO)


def _sum(values: Any) -> Decimal:
    """Sum of the known values (Infracost's totals skip nil costs)."""
    return sum((value for value in values if value is not None), ZERO)


def _text(value: Decimal | None) -> str | None:
    """A decimal string without exponent or trailing zeros (`12.5`, `0`), as Infracost's."""
    if value is None:
        return None
    text = f"{value.normalize():f}"
    return "0" if text in ("-0", "") else text
