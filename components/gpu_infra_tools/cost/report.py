"""An estimate for people: text lines for the plan and `gpu-infra cost`, a markdown table for
pull requests."""

from __future__ import annotations

from gpu_infra_tools.cost.model import Estimate

CAPACITY_LABELS = {"on_demand": "on-demand", "spot": "spot", "reserved": "reserved",
                   "savings_plan": "savings plan", "prepaid": "prepaid"}


def money(value: float | None) -> str:
    """`1,234.5`, or `unknown` for None."""
    if value is None:
        return "unknown"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def gpu_lines(estimate: Estimate) -> list[str]:
    """The on-demand / spot / reserved / prepaid split and the saving against all
    on-demand ([] without GPU instances)."""
    if not any(r.gpu for r in estimate.resources):
        return []
    split = estimate.gpu_split()
    parts = [f"{CAPACITY_LABELS[c]} {money(split[c])}" for c in CAPACITY_LABELS
             if any(slot.capacity == c for r in estimate.resources for slot in r.gpu)]
    lines = [f"GPU instances per month: {' · '.join(parts)}"]
    saving, all_on_demand = split["saving"], split["all_on_demand"]
    if saving is None or all_on_demand is None:
        lines.append("Saving against all on-demand: unknown (a GPU price is unknown)")
    else:
        share = f" ({saving / all_on_demand:.0%})" if all_on_demand else ""
        lines.append(f"Saving against all on-demand ({money(all_on_demand)}): "
                     f"{money(saving)}{share}")
    return lines


def render_text(estimate: Estimate) -> str:
    """The estimate as indented text lines."""
    currency = estimate.currency
    out = [f"Cost estimate ({currency}, {estimate.hours_per_month} h/month, indicative list "
           "prices):",
           f"    Total: {estimate.summary()}",
           f"    Hourly: {money(estimate.total_hourly_cost)} {currency}/h", "",
           "    By component (monthly):"]
    components = estimate.by_component()
    width = max((len(name) for name in components), default=10) + 2
    out += [f"      {name:<{width}}{_cell(estimate, name, cost):>12}"
            for name, cost in components.items()]
    gpu = gpu_lines(estimate)
    if gpu:
        out += ["", *[f"    {line}" for line in gpu]]
    if estimate.unpriced:
        out += ["", f"    Unpriced ({len(estimate.unpriced)}):"]
        out += [f"      {r.resource_type} {r.name}: {r.note or 'price unknown'}"
                for r in estimate.unpriced]
    if estimate.usage_based:
        out += ["", "    Usage-based, not in the total:"]
        out += [f"      {r.name}: {c.name} at {money(c.price)} {currency}/{c.unit}"
                for r, c in estimate.usage_based]
    return "\n".join(out)


def render_markdown(estimate: Estimate) -> str:
    """The estimate as a markdown section."""
    currency = estimate.currency
    out = [f"**Estimated cost: {estimate.summary()}**", "",
           f"| Component | Monthly ({currency}) |", "|---|---:|"]
    out += [f"| `{name}` | {_cell(estimate, name, cost)} |"
            for name, cost in estimate.by_component().items()]
    out += [f"| **Total** | **{money(estimate.total_monthly_cost)}** |"]
    gpu = gpu_lines(estimate)
    if gpu:
        out += ["", *[f"{line}  " for line in gpu]]
    if estimate.unpriced:
        out += ["", "Unpriced: " + ", ".join(f"`{r.name}`" for r in estimate.unpriced)]
    return "\n".join(out)


def _cell(estimate: Estimate, component: str, cost: float | None) -> str:
    """A component's monthly cost; without one, `unknown` if a price is missing, else
    `usage-based`."""
    if cost is not None:
        return money(cost)
    unpriced = any(r.unpriced for r in estimate.resources if r.component == component)
    return "unknown" if unpriced else "usage-based"
