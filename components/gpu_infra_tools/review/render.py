"""How a review is shown: a preview tree like `pulumi preview`, markdown for a pull request."""

from __future__ import annotations

from collections import Counter, defaultdict

from gpu_infra_tools.cost import report as cost_report
from gpu_infra_tools.plan.diff import ResourceChange
from gpu_infra_tools.plan.engine import Plan, PlannedResource
from gpu_infra_tools.review import Review
from gpu_infra_tools.review.changes import ChangeReport
from gpu_infra_tools.review.policy import BUDGET_RULE, UNPRICED_RULE

PROTECTED_MARK = "[protected]"
CHANGE_MARKS = {"create": "+  ", "update": "~  ", "replace": "+- ", "delete": "-  ",
                "same": "   "}
"""Preview-tree marks per change, as `pulumi preview` draws them."""
DETAIL_LIMIT = 200
"""Changed resources listed one by one; the rest are counted."""


def _children(plan: Plan) -> dict[str | None, list[PlannedResource]]:
    known = {r.urn for r in plan.resources}
    tree: dict[str | None, list[PlannedResource]] = defaultdict(list)
    for resource in plan.resources:
        parent = resource.parent if resource.parent in known else None
        tree[parent].append(resource)  # plans list resources in tree order already
    return tree


def _tree_lines(plan: Plan) -> list[tuple[str, PlannedResource]]:
    """(indent prefix, resource) in display order."""
    tree = _children(plan)
    lines: list[tuple[str, PlannedResource]] = []

    def walk(parent: str | None, prefix: str) -> None:
        siblings = tree.get(parent, [])
        for index, resource in enumerate(siblings):
            last = index == len(siblings) - 1
            lines.append((prefix + ("└─ " if last else "├─ "), resource))
            walk(resource.urn, prefix + ("   " if last else "│  "))

    walk(None, "")
    return lines


def type_counts(plan: Plan) -> list[tuple[str, int]]:
    """Resources to create per type token, most first."""
    counts = Counter(r.type for r in plan.resources if r.custom)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def render_text(review: Review, changes: ChangeReport | None = None) -> str:
    """The default output: the change report first (with `changes`), then a preview tree,
    counts, outputs, secrets and findings."""
    plan = review.plan
    by_urn = changes.by_urn() if changes else {}
    stack_label = f"{plan.project}-{plan.stack_name}"
    rows = [("", "pulumi:pulumi:Stack", stack_label, "")]
    rows += [(prefix, r.type, r.name, PROTECTED_MARK if r.protect else "")
             for prefix, r in _tree_lines(plan)]
    type_width = max(len(prefix) + len(kind) for prefix, kind, _, _ in rows) + 2
    name_width = max(len(name) for _, _, name, _ in rows) + 2
    out = _changes_text(changes) if changes else []
    out += [f"Previewing update ({plan.stack_name}), offline under the Pulumi mock engine"
            + (f", against {changes.against}:" if changes else ":"), "",
            f"     {'Type':<{type_width}}{'Name':<{name_width}}Plan"]
    urns = [None] + [r.urn for _, r in _tree_lines(plan)]
    for urn, (prefix, kind, name, mark) in zip(urns, rows, strict=True):
        change = by_urn.get(urn) if urn else None
        word = change.change if change else ("same" if changes else "create")
        label = f"{word} (restart)" if change and change.restart else word
        out.append(f" {CHANGE_MARKS[word]} {prefix + kind:<{type_width}}{name:<{name_width}}"
                   f"{label} {mark}".rstrip())
    custom = sum(1 for r in plan.resources if r.custom)
    out += ["", "Resources:", f"    + {custom} to create "
            f"({len(plan.resources) - custom} components)", "", "Resources by type:"]
    out += [f"    {count:>5}  {kind}" for kind, count in type_counts(plan)]
    protected = [r for r in plan.resources if r.protect]
    if protected:
        out += ["", f"Protected from deletion ({len(protected)}):"]
        out += [f"    {r.type}  {r.name}" for r in protected]
    if plan.outputs:
        out += ["", "Outputs:"]
        out += [f"    {key}: {_short(value)}" for key, value in plan.outputs.items()]
    out += _notes(plan)
    out += ["", cost_report.render_text(review.cost)]
    budget = budget_line(review)
    if budget:
        out += ["", budget.replace("**", "")]
    if review.verdicts:
        out += ["", f"Policy violations ({len(review.verdicts)}):"]
        out += [f"    {verdict.line()}" for verdict in review.verdicts]
    out += ["", review.coverage.line()]
    return "\n".join(out)


def render_markdown(review: Review, changes: ChangeReport | None = None) -> str:
    """A summary fit for a pull-request comment, most important first, so a comment cut to
    GitHub's size keeps what a reviewer decides on: the summary line, the change impact and
    guard rails (with `changes`), the budget verdict and the cost table, the policy
    violations and findings; then the resource counts, the changed resources and the
    preview tree."""
    plan = review.plan
    cluster = plan.cluster
    custom = sum(1 for r in plan.resources if r.custom)
    out = [f"### gpu-infra plan: `{plan.stack_name}`", "",
           f"{cluster.layout} · {cluster.environment} · {cluster.region} · "
           f"**{custom} resources in the plan**", ""]
    if changes:
        out += _impact_markdown(changes)
    budget = budget_line(review)
    if budget:
        out += [budget, ""]
    out += [cost_report.render_markdown(review.cost)]
    if review.verdicts:
        out += ["", f"**Policy violations: {len(review.verdicts)}**", "",
                "| Level | Rule | Severity | Resource | Message |", "|---|---|---|---|---|"]
        out += [f"| {v.level} | `{v.rule}` | {v.severity} | "
                f"{f'`{v.resource_name}`' if v.resource_name else 'stack'} | "
                f"{v.message.replace('|', '/')} |" for v in review.verdicts]
    out += ["", review.coverage.line()]
    notes = _notes(plan)
    if notes:
        out += ["", *[line.strip() for line in notes if line.strip()]]
    out += ["", "| Resource type | Count |", "|---|---:|"]
    out += [f"| `{kind}` | {count} |" for kind, count in type_counts(plan)]
    protected = [r for r in plan.resources if r.protect]
    if protected:
        out += ["", f"Protected from deletion: {len(protected)} resource(s)."]
    if changes:
        out += _changed_markdown(changes)
    out += ["", "<details><summary>Preview tree</summary>", "", "```",
            *[f"+ {prefix}{r.type} {r.name}" for prefix, r in _tree_lines(plan)],
            "```", "</details>"]
    return "\n".join(out)


def budget_line(review: Review) -> str | None:
    """`**Budget: ...**`, the estimate against the stack's `monthly_budget_cny` and the
    budget rules' verdicts: over budget (its level), not judged while GPU instances have no
    price (naming them, with the level of `budget-unpriced-gpus`), not checked when the
    policy config turned the rules off, else within budget (for the priced part, when other
    resources are unpriced); None for a stack without a budget."""
    budget = review.plan.cluster.monthly_budget_cny
    if budget is None:
        return None
    cost = review.cost
    over = next((v for v in review.verdicts if v.rule == BUDGET_RULE), None)
    unpriced = next((v for v in review.verdicts if v.rule == UNPRICED_RULE), None)
    gpus = cost.unpriced_capacity(gpus_only=True)
    if over is not None:
        state = f"**over budget** ({over.level})"
    elif gpus:
        level = f" ({unpriced.level})" if unpriced else ""
        state = (f"not judged{level}: no price for "
                 + "; ".join(c.line() for c in gpus))
    elif not review.budget_checked:
        state = "not checked (the policy config disables `monthly-budget`)"
    elif cost.unpriced:
        state = f"within budget for the priced part ({len(cost.unpriced)} resource(s) unpriced)"
    else:
        state = "within budget"
    bound = "≥ " if cost.unpriced else ""
    return (f"**Budget: {bound}{cost_report.money(cost.total_monthly_cost)} of "
            f"{cost_report.money(budget)} {cost.currency}/month: {state}**")


def _notes(plan: Plan) -> list[str]:
    out: list[str] = []
    if plan.secret_keys:
        out += ["", "Secrets: these `secure:` values cannot be decrypted offline and were "
                    "planned with a placeholder:"]
        out += [f"    {key}" for key in plan.secret_keys]
    if plan.findings:
        out += ["", "Validator findings:"]
        out += [f"    {finding.line()}" for finding in plan.findings]
    return out


def _short(value: object, width: int = 100) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _changed(changes: ChangeReport) -> list[ResourceChange]:
    return [c for c in changes.changes if c.custom and c.change != "same"]


def _changes_text(changes: ChangeReport) -> list[str]:
    """The change report as the first lines of the text output."""
    out = [f"Changes against {changes.against}:"]
    out += [f"  {line}" for line in changes.summary_lines()]
    if changes.findings:
        out += ["", "Guard rails:"] + [f"  {f.line()}" for f in changes.findings]
    if changes.unused_acknowledgements:
        out += ["", "Acknowledgements that match nothing (remove them):"]
        out += [f"  {line}" for line in changes.unused_acknowledgements]
    changed = _changed(changes)
    if changed:
        out += ["", "Changed resources:"]
        for change in changed[:DETAIL_LIMIT]:
            restart = " (restart)" if change.restart else ""
            because = f"  because {', '.join(change.because)}" if change.because else ""
            if change.goes_with:
                because += f" (with {change.goes_with.rpartition('::')[2]})"
            out.append(f"  {CHANGE_MARKS[change.change]}{change.change}{restart}  "
                       f"{change.type}  {change.name}{because}")
        if len(changed) > DETAIL_LIMIT:
            out.append(f"  ... and {len(changed) - DETAIL_LIMIT} more (see --json)")
    return out + [""]


def _impact_markdown(changes: ChangeReport) -> list[str]:
    """The change report's impact for a pull request: the summary lines and guard rails."""
    out = [f"**Changes against {changes.against}**", ""]
    out += [f"- {line}" for line in changes.summary_lines()]
    if changes.findings:
        out += ["", "| Level | Guard rail | Resources | Message |", "|---|---|---:|---|"]
        out += [f"| {f.level.value}{' (acknowledged)' if f.acknowledged else ''} | "
                f"`{f.rule}` | {len(f.resources)} | {f.message.replace('|', '/')} |"
                for f in changes.findings]
    if changes.unused_acknowledgements:
        out += ["", "Acknowledgements that match nothing (remove them): "
                + "; ".join(f"`{a}`" for a in changes.unused_acknowledgements)]
    return out + [""]


def _changed_markdown(changes: ChangeReport) -> list[str]:
    """The changed resources one by one (DETAIL_LIMIT at most), folded."""
    changed = _changed(changes)
    if not changed:
        return []
    out = ["", f"<details><summary>Changed resources ({len(changed)})</summary>", "",
           "| Change | Restart | Type | Name | Because |", "|---|---|---|---|---|"]
    out += [f"| {c.change} | {'yes' if c.restart else ''} | `{c.type}` | `{c.name}` | "
            f"{', '.join(f'`{p}`' for p in c.because)} |" for c in changed[:DETAIL_LIMIT]]
    if len(changed) > DETAIL_LIMIT:
        out.append(f"\n... and {len(changed) - DETAIL_LIMIT} more (see `plan --json`)")
    return [*out, "", "</details>"]
