"""The difference between two estimates, per resource and in total: what a change (a pull
request, or a clone of a stack) does to the bill."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpu_infra_tools.cost.model import Estimate, ResourceCost
from gpu_infra_tools.cost.report import money


@dataclass(frozen=True)
class ResourceDiff:
    """One resource's monthly cost before and after (None: absent or unknown)."""

    name: str
    resource_type: str
    before: float | None
    after: float | None
    status: str
    """added, removed or changed."""
    before_label: str = "-"
    after_label: str = "-"
    """What each side shows: a cost, `unknown`, `usage-based`, or `-` when absent."""

    @property
    def delta(self) -> float | None:
        """after - before, counting an absent side as 0; None if a side is unknown."""
        before = 0.0 if self.status == "added" else self.before
        after = 0.0 if self.status == "removed" else self.after
        return None if before is None or after is None else after - before


@dataclass(frozen=True)
class Comparison:
    """`after` against `before`."""

    before: Estimate
    after: Estimate
    resources: list[ResourceDiff]

    @property
    def delta_monthly(self) -> float:
        """Difference of the known monthly totals."""
        return self.after.total_monthly_cost - self.before.total_monthly_cost

    def render_text(self, before_name: str, after_name: str) -> str:
        """Changed resources and the totals."""
        currency = self.after.currency
        out = [f"Cost difference {before_name} -> {after_name} ({currency}/month):"]
        width = max((len(d.name) for d in self.resources), default=10) + 2
        for diff in self.resources:
            out.append(f"  {diff.status:<8}{diff.name:<{width}}{diff.before_label:>12} -> "
                       f"{diff.after_label:>12}  {_signed(diff.delta)}")
        if not self.resources:
            out.append("  no resource changes cost")
        out += [f"Total: {self.before.summary()} -> {self.after.summary()}",
                f"Difference: {_signed(self.delta_monthly)} {currency}/month"]
        return "\n".join(out)

    def render_markdown(self, before_name: str, after_name: str) -> str:
        """Changed resources and the totals as a markdown table (for a pull request)."""
        currency = self.after.currency
        out = [f"**Cost difference `{before_name}` -> `{after_name}`: "
               f"{_signed(self.delta_monthly)} {currency}/month**", "",
               f"| Change | Resource | Before | After | Difference ({currency}/month) |",
               "|---|---|---:|---:|---:|"]
        out += [f"| {diff.status} | `{diff.name}` | {diff.before_label} | {diff.after_label} "
                f"| {_signed(diff.delta)} |" for diff in self.resources]
        if not self.resources:
            out.append("| | no resource changes cost | | | |")
        out += [f"| | **Total** | {self.before.summary()} | {self.after.summary()} | "
                f"**{_signed(self.delta_monthly)}** |"]
        return "\n".join(out)


def _signed(delta: float | None) -> str:
    """`+1,234` or `-5.50`; `unknown` for None."""
    sign = "" if delta is None or delta < 0 else "+"
    return f"{sign}{money(delta)}"


def _label(resource: ResourceCost) -> str:
    if resource.monthly_cost is not None:
        return money(resource.monthly_cost)
    return "unknown" if resource.unpriced else "usage-based"


def _key(name: str, prefix: str) -> str:
    """A resource name without its cluster prefix, so two clusters' resources pair up."""
    return name.removeprefix(f"{prefix}-") if prefix else name


def pair_resources(before: Sequence[ResourceCost], after: Sequence[ResourceCost],
                   before_prefix: str = "", after_prefix: str = ""
                   ) -> list[tuple[ResourceCost | None, ResourceCost | None]]:
    """(before, after) pairs: resources of the same type and the same name without the
    cluster name prefix (`before_prefix` / `after_prefix`); None where a side has none.
    After's order, then the resources only before has."""
    old = {(r.resource_type, _key(r.name, before_prefix)): r for r in before}
    new = {(r.resource_type, _key(r.name, after_prefix)): r for r in after}
    return [(old.get(key), new.get(key)) for key in [*new, *(k for k in old if k not in new)]]


def compare(before: Estimate, after: Estimate, before_prefix: str = "",
            after_prefix: str = "") -> Comparison:
    """Resources whose monthly cost differs between `before` and `after`, paired by
    pair_resources."""
    diffs: list[ResourceDiff] = []
    for was, now in pair_resources(before.resources, after.resources, before_prefix,
                                   after_prefix):
        if was is not None and now is not None:
            if was.monthly_cost == now.monthly_cost:
                continue
            diffs.append(ResourceDiff(now.name, now.resource_type, was.monthly_cost,
                                      now.monthly_cost, "changed", _label(was), _label(now)))
        elif now is not None:
            if now.free:
                continue
            diffs.append(ResourceDiff(now.name, now.resource_type, None, now.monthly_cost,
                                      "added", after_label=_label(now)))
        elif was is not None and not was.free:
            diffs.append(ResourceDiff(was.name, was.resource_type, was.monthly_cost, None,
                                      "removed", before_label=_label(was)))
    return Comparison(before, after, diffs)
