"""The change report: what applying a plan does to the cluster an earlier plan (the base)
built, in words a reviewer reads first, and the guard rails on it.

Impact: GPU nodes replaced, deleted or restarted and why (ECS instances, scaling groups, and ACK
node pools: a replaced pool releases every node, a lower desiredSize some of them); data
resources (buckets, file systems, kept disks, log projects and stores, KMS keys, image
repositories) replaced or deleted; resources replaced or deleted with their parent (a log
store's index: `replaceWith` / `deletedWith`, plan.diff); pool settings that reach new nodes
only, or roll over running nodes; a control-plane upgrade; what protection blocks (Pulumi
`protect`, each type's cloud deletion protection, PrePaid instances without force_delete, fixed
names replaced create-before-delete); what the cloud refuses that the diff accepts (the update
preconditions: values that only grow, one-step upgrades, admission rules; review.preconditions);
reserved capacity bought or left billing; changes the provider ignores; the monthly cost before
and after.

Guard rails (findings): in prod, replacing or deleting GPU nodes or data, and buying or
abandoning reserved capacity, are ERRORs unless acknowledged (see acknowledgements.py);
elsewhere WARNINGs. Anything blocked or refused is an ERROR everywhere: `pulumi up` would
stop halfway.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_infra.blocks.conventions import FLEET_TAG_KEY
from gpu_infra.knowhow import Level
from gpu_infra_facts import types as t
from gpu_infra_facts.ack import DRIVER_VERSION_LABEL
from gpu_infra_facts.update_preconditions import protection
from gpu_infra_facts.update_semantics import ResourceSemantics, Rule, semantics
from gpu_infra_tools.cost import Estimate, estimate
from gpu_infra_tools.plan.diff import CHANGES, ResourceChange, diff_records
from gpu_infra_tools.plan.engine import PlannedResource
from gpu_infra_tools.review import Review
from gpu_infra_tools.review.acknowledgements import Acknowledgements
from gpu_infra_tools.review.preconditions import Plans, deletions, refusals, version

CONFIG_RUN_SUFFIX = "-config-run"
"""A fixed fleet's configuration channel (blocks.compute.nodes): `<fleet>-config-run`."""
FIRST_BOOT_INPUTS = ("instanceType", "imageId")
"""Instance inputs changed in place (a restart) while the node keeps the configuration its
first boot wrote: cloud-init runs user data once, so config.sh keeps the old type's GPU
counts (and a re-image runs the old user data on the new system disk)."""
DATA_KINDS = {**t.DATA_KINDS,
              t.KMS_KEY: "KMS key",
              **{token: "image repository" for token in t.REGISTRY_REPOS},
              t.REGISTRY_EE_INSTANCE: "registry instance"}
"""Resources whose replacement or deletion loses data: the data holders (types.DATA_KINDS:
buckets, file systems, kept disks, log projects and stores, backup vaults), a KMS key (the
means to read what it encrypts), and image repositories and registry instances (their images
go with them, update_semantics on_delete). A disk only when it outlives its instance
(deleteWithInstance false): scratch disks go with their nodes."""
LAYOUT_PREFIX = "gpu-infra:layouts:"
GONE = ("replace", "delete")

RULE_GPU = "replaces-gpu-nodes"
RULE_DATA = "replaces-data"
RULE_BLOCKED = "blocked-by-protection"
RULE_REFUSED = "refused-by-cloud"
RULE_ROLL = "rolls-running-nodes"
RULE_RESERVED = "reserved-capacity"
RULE_RESTART = "restarts-gpu-nodes"
RULE_IGNORED = "change-ignored"
RULE_OLD_CONFIG = "nodes-keep-old-config"
ACKNOWLEDGEABLE = (RULE_GPU, RULE_DATA, RULE_RESERVED)
"""Guard rails an acknowledgement can turn from ERROR to INFO in prod."""


@dataclass
class ChangeFinding:
    """One guard rail's verdict on a set of resources."""

    rule: str
    level: Level
    resources: list[str]
    message: str
    acknowledged: bool = False

    def line(self) -> str:
        """`LEVEL rule: message (resources)`."""
        names = ", ".join(_few(self.resources))
        mark = " [acknowledged]" if self.acknowledged else ""
        return f"{self.level.value} {self.rule}{mark}: {self.message} ({names})"

    def to_json(self) -> dict[str, Any]:
        """The finding as `plan --json` writes it."""
        return {"rule": self.rule, "level": self.level.value, "resources": self.resources,
                "message": self.message, "acknowledged": self.acknowledged}


@dataclass
class Impact:
    """The change report's summary."""

    gpu_nodes: dict[str, list[str]] = field(default_factory=dict)
    """created / replaced / deleted / restarted -> GPU node (or scaling group) names."""
    gpu_causes: Counter[str] = field(default_factory=Counter)
    """Input path -> number of GPU nodes it replaces or restarts."""
    pool_nodes: dict[str, int | None] = field(default_factory=dict)
    """ACK node pool in gpu_nodes -> the nodes it adds or removes (None: every node of an
    autoscaled pool, a number the plan does not know)."""
    new_nodes_only: dict[str, list[str]] = field(default_factory=dict)
    """ACK node pool -> changed settings that reach only nodes that join afterwards."""
    relabelled: dict[str, list[str]] = field(default_factory=dict)
    """ACK node pool -> labels / taints written to its running nodes."""
    rolled: dict[str, list[str]] = field(default_factory=dict)
    """ACK node pool -> settings ACK applies to its running nodes in batches (restarting a
    node's kubelet or runtime; update_semantics `nodes`, how rolling)."""
    upgraded: tuple[str, str, str] | None = None
    """(cluster, old, new) Kubernetes version of an in-place control-plane upgrade."""
    data: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """replaced / deleted / orphaned / expired -> (kind, name) of data resources (expired: an
    in-place update after which the cloud deletes part of the data, update_preconditions)."""
    expired: list[tuple[str, str]] = field(default_factory=list)
    """(name, what the cloud deletes and what instead) of the `expired` data resources."""
    scaled_in: list[tuple[str, str]] = field(default_factory=list)
    """(name, what the cloud releases and what instead) of GPU fleets whose in-place update
    releases running nodes (a lower ESS maximum)."""
    blocked: list[tuple[str, str]] = field(default_factory=list)
    """(name, why) of changes protection refuses."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(name, why and what instead) of changes the cloud API refuses (update_preconditions)."""
    reserved: dict[str, list[str]] = field(default_factory=dict)
    """bought / left_billing -> reserved capacity names."""
    ignored: list[tuple[str, str, str]] = field(default_factory=list)
    """(name, input path, note) of changes the provider never applies."""
    renamed: tuple[str, str] | None = None
    inline_disks_removed: list[str] = field(default_factory=list)
    """Nodes whose inline data disks the new plan drops (ForceNew: they are replaced)."""
    stale_bootstrap: list[str] = field(default_factory=list)
    """Replaced nodes that boot their recorded user data, not the new one (ignored input)."""
    first_boot_config: list[str] = field(default_factory=list)
    """Nodes restarted for a new type or image that keep their first-boot configuration."""
    stale_shared_fs: list[str] = field(default_factory=list)
    """Running nodes that keep the hard NFS entry of a shared file system the plan deletes."""
    old_image: list[str] = field(default_factory=list)
    """Scaling groups whose running instances keep the old image (no rolling refresh)."""
    to_spot_workers: dict[str, list[str]] = field(default_factory=dict)
    """Scaling group created -> the fixed spot nodes of its fleet (GpuFleet tag) the plan
    deletes: a training fleet moving to spot workers (layouts.training)."""
    old_user_data: list[str] = field(default_factory=list)
    """Scaling groups whose running instances keep the user data they booted (the bootstrap,
    the model server's image, model and command), with no rolling refresh."""
    reconfigured: list[str] = field(default_factory=list)
    """Fleets whose running nodes get this plan's config.sh by Cloud Assistant (the
    configuration channel's invocation runs again)."""
    cost_before: float = 0.0
    cost_after: float = 0.0
    currency: str = "CNY"
    cost_complete: bool = True
    """False when the plans' unpriced resources differ (the difference is then a bound)."""
    with_parent: list[tuple[str, str]] = field(default_factory=list)
    """(name, parent name) of resources replaced or deleted with another (`replaceWith`,
    `deletedWith`): they name it by a name its replacement keeps, so their own inputs are the
    same, but they cannot outlive it (a log store's index, a volume's claim)."""


@dataclass
class ChangeReport:
    """The change of every resource against a base plan, its impact and guard rails."""

    against: str
    changes: list[ResourceChange]
    impact: Impact
    findings: list[ChangeFinding]
    unused_acknowledgements: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    """Stack-file secrets: placeholders in both plans, so their changes are invisible."""

    @property
    def blocked(self) -> bool:
        """True if a guard rail fails the plan."""
        return any(f.level is Level.ERROR for f in self.findings)

    def counts(self) -> dict[str, int]:
        """Resources (not components) per change kind, in CHANGES order."""
        counter = Counter(c.change for c in self.changes if c.custom)
        return {kind: counter.get(kind, 0) for kind in CHANGES}

    def by_urn(self) -> dict[str, ResourceChange]:
        """Change per URN (deleted resources under their base URN)."""
        return {c.urn: c for c in self.changes}

    def summary_lines(self) -> list[str]:
        """The impact in words, most dangerous first."""
        return summary_lines(self)

    def to_json(self) -> dict[str, Any]:
        """The `changes` record of `plan --json --against`."""
        impact = self.impact
        return {
            "against": self.against, "counts": self.counts(),
            "impact": {
                "summary": self.summary_lines(),
                "gpuNodes": impact.gpu_nodes, "gpuCauses": dict(impact.gpu_causes),
                "data": {kind: [{"kind": k, "name": n} for k, n in items]
                         for kind, items in impact.data.items()},
                "blocked": [{"name": n, "why": w} for n, w in impact.blocked],
                "refused": [{"name": n, "why": w} for n, w in impact.refused],
                "expired": [{"name": n, "why": w} for n, w in impact.expired],
                "scaledIn": [{"name": n, "why": w} for n, w in impact.scaled_in],
                "reserved": impact.reserved,
                "ignored": [{"name": n, "path": p, "note": t} for n, p, t in impact.ignored],
                "renamed": list(impact.renamed) if impact.renamed else None,
                "inlineDisksRemoved": impact.inline_disks_removed,
                "staleBootstrap": impact.stale_bootstrap,
                "firstBootConfig": impact.first_boot_config,
                "staleSharedFs": impact.stale_shared_fs, "oldImage": impact.old_image,
                "toSpotWorkers": impact.to_spot_workers,
                "oldUserData": impact.old_user_data,
                "reconfigured": impact.reconfigured,
                "withParent": [{"name": n, "parent": p} for n, p in impact.with_parent],
                "poolNodes": impact.pool_nodes, "newNodesOnly": impact.new_nodes_only,
                "relabelled": impact.relabelled, "rolled": impact.rolled,
                "upgraded": list(impact.upgraded) if impact.upgraded else None,
                "monthlyCost": {"before": round(impact.cost_before, 2),
                                "after": round(impact.cost_after, 2),
                                "currency": impact.currency,
                                "complete": impact.cost_complete}},
            "findings": [f.to_json() for f in self.findings],
            "unusedAcknowledgements": self.unused_acknowledgements,
            "deleted": [{"urn": c.urn, "type": c.type, "name": c.name, **c.to_json()}
                        for c in self.changes if c.change == "delete"],
        }


def change_report(review: Review, base: dict[str, Any], against: str,
                  acknowledgements: Acknowledgements | None = None) -> ChangeReport:
    """Compare `review`'s plan with the `base` plan record (`plan --json`); `against` names
    the base for people (a file or a git revision)."""
    plan = review.plan
    base_resources = base.get("resources") or []
    changes = diff_records(base_resources, [r.to_json() for r in plan.resources])
    before = estimate([_planned(r) for r in base_resources], plan.cluster)
    impact = _impact(changes, before, review.cost)
    impact.renamed = _renamed(base_resources, plan.resources)
    findings = _guard_rails(impact, plan.cluster.profile.guard_changes)
    unused = acknowledgements.apply(findings, ACKNOWLEDGEABLE) if acknowledgements else []
    return ChangeReport(against, changes, impact, findings, unused, list(plan.secret_keys))


def _planned(record: dict[str, Any]) -> PlannedResource:
    return PlannedResource(
        urn=record["urn"], type=record["type"], name=record["name"],
        custom=bool(record.get("custom")), parent=record.get("parent"),
        inputs=record.get("inputs") or {}, dependencies=record.get("dependencies") or [],
        protect=bool(record.get("protect")), id=record.get("id"))


def _is_gpu(change: ResourceChange) -> bool:
    if change.type == t.SCALING_GROUP:
        return True
    tags = change.inputs.get("tags") or {}
    return change.type in (t.INSTANCE, t.NODE_POOL) and FLEET_TAG_KEY in tags


def _pool_size(inputs: dict[str, Any]) -> int | None:
    """A node pool's fixed size (None when the autoscaler owns it)."""
    size = inputs.get("desiredSize")
    return int(size) if isinstance(size, str) and size.isdigit() else None


def _pool_impact(change: ResourceChange, impact: Impact) -> None:
    """What a GPU node pool's change does to its nodes: created, released (replaced or
    deleted pools, a lower desiredSize), settings that reach new nodes only, labels and
    taints written to running nodes."""
    kind = change.change
    if kind in ("create", *GONE):
        impact.pool_nodes[change.name] = _pool_size(change.inputs if kind == "create"
                                                    else change.base_inputs)
        return
    if kind != "update":
        return
    rules = semantics(t.NODE_POOL)
    before, after = _pool_size(change.base_inputs), _pool_size(change.inputs)
    if before is not None and after is not None and before != after:
        key = "created" if after > before else "deleted"
        impact.gpu_nodes.setdefault(key, []).append(change.name)
        impact.pool_nodes[change.name] = abs(after - before)
        if after < before:
            impact.gpu_causes["desiredSize"] += before - after
    new_only: list[str] = []
    for path in change.because:
        rule = rules.reaching_nodes(path)
        if rule is not None and rule.how == "new-nodes":
            new_only.append(path.split(".")[0])
        elif rule is not None and rule.how == "running-nodes":
            impact.relabelled.setdefault(change.name, []).append(path.split(".")[0])
    if _label(change.base_inputs, DRIVER_VERSION_LABEL) != _label(change.inputs,
                                                                  DRIVER_VERSION_LABEL):
        new_only.append(f"label {DRIVER_VERSION_LABEL} (read when a node joins)")
    if new_only:
        impact.new_nodes_only[change.name] = list(dict.fromkeys(new_only))
    if change.name in impact.relabelled:
        impact.relabelled[change.name] = list(dict.fromkeys(impact.relabelled[change.name]))


def _rolled(change: ResourceChange) -> list[str]:
    """The settings of a node pool's in-place update that ACK rolls over its running nodes
    (GPU pools and the system pool alike)."""
    if change.type != t.NODE_POOL or change.change != "update":
        return []
    rules = semantics(t.NODE_POOL)
    return list(dict.fromkeys(path.split(".")[0] for path in change.because
                              if (rule := rules.reaching_nodes(path)) and rule.how == "rolling"))


def _label(inputs: dict[str, Any], key: str) -> str | None:
    return next((str(label.get("value")) for label in inputs.get("labels") or []
                 if isinstance(label, dict) and label.get("key") == key), None)


def _upgrade(change: ResourceChange) -> tuple[str, str, str] | None:
    """(cluster, old, new) when the cluster's Kubernetes version goes up in place."""
    if change.type != t.MANAGED_KUBERNETES or change.change != "update" \
            or "version" not in change.because:
        return None
    old, new = change.base_inputs.get("version"), change.inputs.get("version")
    if not isinstance(old, str) or not isinstance(new, str) or version(new) < version(old):
        return None
    return change.name, old, new


def _holds_data(change: ResourceChange) -> bool:
    """Data kinds hold data; a stand-alone disk only when it outlives its instance."""
    return change.type not in t.DISKS or change.base_inputs.get("deleteWithInstance") is not True


def _drops_inline_disks(change: ResourceChange) -> bool:
    """The base instance had inline data disks and the new one has none (a stack whose
    nodes were created with inline disks, planned without `storage.inline_disks`)."""
    before = change.base_inputs.get("dataDisks")
    return bool(before) and not change.inputs.get("dataDisks")


def _keeps_recorded_user_data(change: ResourceChange) -> bool:
    """The replaced instance ignores userData, which differs from the base's: Pulumi gives
    the new instance the recorded (old) value of an ignored input."""
    before = change.base_inputs.get("userData")
    ignored = (change.new or {}).get("ignoreChanges", ())
    return "userData" in ignored and before != change.inputs.get("userData")


def _kept_inline_disks(change: ResourceChange) -> list[str]:
    """Names of inline data disks of the base instance that outlive it."""
    disks = change.base_inputs.get("dataDisks") or []
    return [str(d.get("name") or "disk") for d in disks
            if isinstance(d, dict) and d.get("deleteWithInstance") is False]


def _impact(changes: Sequence[ResourceChange], before: Estimate, after: Estimate) -> Impact:
    impact = Impact(cost_before=before.total_monthly_cost,
                    cost_after=after.total_monthly_cost, currency=after.currency,
                    cost_complete={r.name for r in before.unpriced}
                    == {r.name for r in after.unpriced})
    plans = Plans.of(changes)
    impact.reconfigured = sorted(
        c.name.removesuffix(CONFIG_RUN_SUFFIX) for c in changes
        if c.type == t.ECS_INVOCATION and c.change in ("create", "replace"))
    for change in changes:
        if not change.custom:
            continue
        kind = change.change
        rules = semantics(change.type)
        if change.goes_with:
            impact.with_parent.append((change.name, change.goes_with.rpartition("::")[2]))
        if _is_gpu(change) and (kind in ("create", *GONE) or change.restart):
            impact.gpu_nodes.setdefault(_past(kind, change.restart), []).append(change.name)
            impact.gpu_causes.update(p for p in change.because
                                     if kind == "replace" or rules.restarting(p))
        if _is_gpu(change) and change.type == t.NODE_POOL:
            _pool_impact(change, impact)
        if rolled := _rolled(change):
            impact.rolled[change.name] = rolled
        expired = deletions(change, plans, "data")
        if expired:
            impact.data.setdefault("expired", []).append((DATA_KINDS[change.type], change.name))
            impact.expired += [(change.name, why) for why in expired.values()]
        released = deletions(change, plans, "nodes") if _is_gpu(change) else {}
        impact.scaled_in += [(change.name, why) for why in released.values()]
        refused = refusals(change, plans)
        impact.refused += [(change.name, why) for why in refused]
        impact.upgraded = impact.upgraded or (None if refused else _upgrade(change))
        if kind in GONE and change.type in DATA_KINDS and _holds_data(change):
            impact.data.setdefault(_past(kind), []).append((DATA_KINDS[change.type],
                                                            change.name))
        if kind in GONE and change.type == t.INSTANCE:
            impact.data.setdefault("orphaned", []).extend(
                ("kept disk", f"{change.name}/{disk}") for disk in _kept_inline_disks(change))
            if kind == "replace" and _drops_inline_disks(change):
                impact.inline_disks_removed.append(change.name)
            if kind == "replace" and _keeps_recorded_user_data(change):
                impact.stale_bootstrap.append(change.name)
        if _is_gpu(change) and change.type == t.INSTANCE and kind == "update" and any(
                p in _first_boot_inputs(change.name, impact.reconfigured)
                for p in change.because):
            impact.first_boot_config.append(change.name)
        if change.type == t.SCALING_CONFIGURATION and kind == "update" \
                and not any(c.type == t.INSTANCE_REFRESH and c.change in ("create", "replace")
                            for c in changes):
            if "imageId" in change.because:
                impact.old_image.append(change.name)
            if "userData" in change.because:
                impact.old_user_data.append(change.name)
        why = _blocked_because(change)
        if why:
            impact.blocked.append((change.name, why))
        if rules.billing == "prepaid" and kind in ("create", *GONE):
            if kind in ("create", "replace"):
                impact.reserved.setdefault("bought", []).append(change.name)
            if kind in GONE:
                impact.reserved.setdefault("left_billing", []).append(change.name)
        for path in change.ignored:
            rule = rules.ignoring(path, change.inputs)
            impact.ignored.append((change.name, path, rule.note if rule else ""))
        kept = {rule.path: rule for path in change.kept
                if (rule := _covering_kept(rules, path)) is not None}
        impact.ignored += [(change.name, f"{path} removed", rule.note)
                           for path, rule in kept.items()]
    impact.to_spot_workers = _to_spot_workers(changes)
    if any(c.type == t.NAS_FILE_SYSTEM and c.change == "delete" for c in changes):
        impact.stale_shared_fs = sorted(
            c.name for c in changes if c.type == t.INSTANCE and _is_gpu(c)
            and c.change in ("same", "update") and not _in_fleets(c.name, impact.reconfigured))
    return impact


def _to_spot_workers(changes: Sequence[ResourceChange]) -> dict[str, list[str]]:
    """Scaling group created -> the spot ecs.Instances of the same fleet the plan deletes
    or replaces (spotStrategy other than NoSpot in the base plan)."""
    def fleet(change: ResourceChange) -> str | None:
        return (change.inputs.get("tags") or {}).get(FLEET_TAG_KEY)

    spot_nodes: dict[str, list[str]] = {}
    for change in changes:
        if change.type == t.INSTANCE and change.change in GONE and fleet(change) and \
                change.base_inputs.get("spotStrategy", "NoSpot") != "NoSpot":
            spot_nodes.setdefault(fleet(change) or "", []).append(change.name)
    return {change.name: spot_nodes[key] for change in changes
            if change.type == t.SCALING_GROUP and change.change == "create"
            and (key := fleet(change) or "") in spot_nodes}


def _covering_kept(rules: ResourceSemantics, path: str) -> Rule | None:
    """The in-place Optional+Computed rule whose removal at `path` does nothing (a ForceNew
    Computed input's removal is silent: nothing to warn about)."""
    rule = rules.kept_when_removed(path)
    return None if rule is None or rule.path in rules.replace else rule


def _in_fleets(node: str, fleets: Sequence[str]) -> bool:
    """Whether `node` (`<fleet>-node-NNN`) belongs to one of `fleets`."""
    return any(node.startswith(f"{fleet}-node-") for fleet in fleets)


def _first_boot_inputs(node: str, reconfigured: Sequence[str]) -> tuple[str, ...]:
    """The in-place changes after which `node` keeps its first-boot configuration: a new
    type's GPU count reaches it by the configuration channel when its fleet's runs again;
    a re-image never does (the new system disk runs the recorded user data)."""
    return ("imageId",) if _in_fleets(node, reconfigured) else FIRST_BOOT_INPUTS


def _past(kind: str, restart: bool = False) -> str:
    if kind == "update":
        return "restarted" if restart else "updated"
    return {"create": "created", "replace": "replaced", "delete": "deleted"}[kind]


def _blocked_because(change: ResourceChange) -> str | None:
    """Why protection stops this replacement or delete, if it does."""
    if change.change not in GONE or change.base is None:
        return None
    base = change.base
    inputs = base.get("inputs") or {}
    rules = semantics(change.type)
    if base.get("protect"):
        return "Pulumi-protected: `pulumi up` refuses to delete it"
    prepaid = inputs.get("instanceChargeType") == "PrePaid"
    if change.type == t.INSTANCE and prepaid and not inputs.get("forceDelete"):
        return ("PrePaid instance without forceDelete: the provider refuses the delete "
                f"({rules.source(rules.on_delete)})" if rules.on_delete else "PrePaid")
    guard = protection(change.type)
    protecting = guard.protecting(inputs)
    if protecting and not prepaid:
        return (f"deletion protection is on ({protecting}): {guard.delete_api} refuses the "
                f"delete and the provider's Delete does not lift it ({guard.delete_source}), "
                "so `pulumi up` stops halfway (turn it off in an update first)")
    if change.change == "replace" and rules.unique_name and change.new is not None:
        name_path = rules.unique_name
        same_name = inputs.get(name_path) == (change.new.get("inputs") or {}).get(name_path)
        if same_name and not change.new.get("deleteBeforeReplace"):
            return (f"its {name_path} is unique and unchanged: create-before-delete collides "
                    "on the name (needs deleteBeforeReplace)")
    return None


def _renamed(base: Sequence[dict[str, Any]],
             new: Sequence[PlannedResource]) -> tuple[str, str] | None:
    """(old, new) cluster name when the layout component's name changed."""
    old = next((r["name"] for r in base if r["type"].startswith(LAYOUT_PREFIX)), None)
    now = next((r.name for r in new if r.type.startswith(LAYOUT_PREFIX)), None)
    return (old, now) if old and now and old != now else None


def _guard_rails(impact: Impact, guarded: bool) -> list[ChangeFinding]:
    gate = Level.ERROR if guarded else Level.WARNING
    findings: list[ChangeFinding] = []
    gone_nodes = impact.gpu_nodes.get("replaced", []) + impact.gpu_nodes.get("deleted", [])
    released = list(dict.fromkeys(name for name, _ in impact.scaled_in))
    if gone_nodes or released:
        causes = ", ".join(_few(sorted(impact.gpu_causes))) or "removed from the stack"
        said = [f"{_count(impact, gone_nodes)} GPU node(s) or fleet(s) destroyed (running "
                f"jobs and local disks are lost); because {causes}"] if gone_nodes else []
        said += [f"running nodes of {', '.join(released)} released by the cloud in place "
                 "(see the change report)"] if released else []
        findings.append(ChangeFinding(RULE_GPU, gate, gone_nodes + released, "; ".join(said)))
    data = [name for key in ("replaced", "deleted", "orphaned", "expired")
            for _, name in impact.data.get(key, [])]
    if data:
        findings.append(ChangeFinding(RULE_DATA, gate, data,
                                      f"{len(data)} data resource(s) replaced, deleted, "
                                      "left behind or cut short: their contents do not move"))
    if impact.blocked:
        findings.append(ChangeFinding(
            RULE_BLOCKED, Level.ERROR, [name for name, _ in impact.blocked],
            "protection refuses these changes, so `pulumi up` would stop halfway: "
            + "; ".join(sorted({why for _, why in impact.blocked}))))
    if impact.refused:
        findings.append(ChangeFinding(
            RULE_REFUSED, Level.ERROR, sorted({name for name, _ in impact.refused}),
            "the cloud refuses these changes, so `pulumi up` would stop there: "
            + "; ".join(sorted({why for _, why in impact.refused}))))
    reserved = impact.reserved.get("bought", []) + impact.reserved.get("left_billing", [])
    if reserved:
        findings.append(ChangeFinding(
            RULE_RESERVED, gate, reserved,
            "reserved capacity is non-refundable: a replacement buys a new reservation while "
            "the old one keeps billing to the end of its term (the provider's delete is a "
            "no-op)"))
    restarted = impact.gpu_nodes.get("restarted", [])
    if restarted:
        findings.append(ChangeFinding(
            RULE_RESTART, Level.WARNING, restarted,
            f"{len(restarted)} GPU node(s) stopped and started in place (running jobs stop)"))
    if impact.rolled:
        findings.append(ChangeFinding(
            RULE_ROLL, Level.WARNING, sorted(impact.rolled),
            "applied to every running node of the pool in batches, restarting each node's "
            "kubelet or container runtime: " + _per_pool(impact.rolled)))
    stale = (impact.first_boot_config + impact.stale_shared_fs + impact.old_image
             + impact.old_user_data + list(impact.new_nodes_only))
    if stale:
        findings.append(ChangeFinding(
            RULE_OLD_CONFIG, Level.WARNING, sorted(set(stale)),
            "running nodes keep what their first boot configured (a new type's GPU count, a "
            "removed shared file system, an image, a node pool's template): see the change "
            "report for the safe way"))
    if impact.ignored:
        findings.append(ChangeFinding(
            RULE_IGNORED, Level.WARNING, sorted({n for n, _, _ in impact.ignored}),
            "the provider never applies: " + "; ".join(
                sorted({f"{path}: {note}" for _, path, note in impact.ignored}))))
    return findings


def _count(impact: Impact, names: Sequence[str]) -> str:
    """GPU nodes behind `names` (an ACK pool counts its nodes): `6`, or `at least 2` when an
    autoscaled pool's size is the autoscaler's."""
    counts = [impact.pool_nodes.get(name, 1) if name in impact.pool_nodes else 1
              for name in names]
    known = sum(c for c in counts if c is not None)
    return f"at least {known}" if None in counts else str(known)


def _named(impact: Impact, names: Sequence[str]) -> list[str]:
    """Names, an ACK pool with the nodes it adds or removes: `llm-gpu-pool (2 nodes)`."""
    return [f"{name} ({impact.pool_nodes[name]} nodes)" if impact.pool_nodes.get(name)
            else f"{name} (every node)" if name in impact.pool_nodes else name
            for name in names]


def _few(names: Sequence[str], limit: int = 4) -> list[str]:
    names = list(names)
    return names if len(names) <= limit else [*names[:limit], f"… {len(names) - limit} more"]


def summary_lines(report: ChangeReport) -> list[str]:
    """The impact in words, most dangerous first; one line per kind of consequence."""
    impact = report.impact
    lines: list[str] = []
    if impact.renamed:
        lines.append(f"The cluster is renamed {impact.renamed[0]} -> {impact.renamed[1]}: "
                     "every resource is deleted and created again under the new name, "
                     "buckets and file systems included (their data does not move).")
    if impact.inline_disks_removed:
        lines.append(f"Inline data disks removed from {len(impact.inline_disks_removed)} "
                     "node(s), so the provider REPLACES them (every ecs.Instance data_disks "
                     "field is ForceNew): these nodes were created with inline disks; keep "
                     "`storage.inline_disks: true` in this stack until you rebuild them "
                     "anyway (docs: Changing a running cluster, Upgrading a stack deployed with "
                     "inline disks).")
    if impact.stale_bootstrap:
        lines.append(f"Replaced nodes boot their OLD bootstrap: {len(impact.stale_bootstrap)} "
                     f"({', '.join(_few(impact.stale_bootstrap))}) get the user data recorded "
                     "when they were created, not this plan's (it is ignored after creation); "
                     "set `fleet.push_user_data: true` for this update.")
    if impact.first_boot_config:
        lines.append(f"Restarted nodes keep their first-boot configuration: "
                     f"{len(impact.first_boot_config)} ({', '.join(_few(impact.first_boot_config))}"
                     ") get a new instance type or image in place, but cloud-init ran their "
                     "user data once: config.sh keeps the old type's GPU count (the health "
                     "check fails and the node leaves every hostfile), a re-image runs the old "
                     "user data on the new system disk, and push_user_data cannot help. The "
                     "safe way: replace them (`pulumi up --replace <urn>` with "
                     "`fleet.push_user_data: true`), one at a time. Not every family allows a "
                     "type change at all (ECS \"Instance type changes\"; the GPU and bare-metal "
                     "families' rules are UNCONFIRMED here).")
    if impact.stale_shared_fs:
        lines.append(f"Running nodes keep the shared file system in /etc/fstab: "
                     f"{len(impact.stale_shared_fs)} ({', '.join(_few(impact.stale_shared_fs))}"
                     ") keep the hard NFS entry and /mnt/shared their first boot wrote, so I/O "
                     "on it hangs and the node is unhealthy at its next boot. First take it out "
                     "on every node (`sed -i '\\# /mnt/shared nfs #d' /etc/fstab && umount -l "
                     "/mnt/shared`, by ssh or a Cloud Assistant command), then apply; new nodes "
                     "clean it themselves (step shared_fs_off).")
    if impact.old_image:
        lines.append(f"Running instances keep the old image: {', '.join(_few(impact.old_image))}"
                     " change the image of new instances only, and ESS refreshes only groups "
                     "with multi_az_policy PRIORITY (fleet.refresh): the others keep it until "
                     "scale-in, a spot reclaim or max_instance_lifetime_days replaces them. To "
                     "roll them now: scale the group to 0 and back, or start an ESS instance "
                     "refresh in the console.")
    for group, nodes in impact.to_spot_workers.items():
        lines.append(f"Spot nodes move into a scaling group: {len(nodes)} fixed spot node(s) "
                     f"({', '.join(_few(nodes))}) are deleted with their attached disks and "
                     f"{group} launches the same number of spot workers, which ESS replaces "
                     "on a reclaim notice from now on (no more `pulumi up --refresh`). A job "
                     "running on them stops: let it save a checkpoint first, and start it "
                     "again with `gpu-infra job` afterwards (it resumes from the newest "
                     "complete one); copy what the nodes' data disks hold that you need.")
    if impact.old_user_data:
        lines.append("Running instances keep the user data they booted (the bootstrap, and "
                     "the model server's image, model and command, `serving`): "
                     f"{', '.join(_few(impact.old_user_data))} change what new instances boot "
                     "only, and ESS refreshes only groups with multi_az_policy PRIORITY "
                     "(fleet.refresh): the others keep it until scale-in, a spot reclaim or "
                     "max_instance_lifetime_days replaces them. To roll them now: raise the "
                     "group's desired capacity by its size, wait until the new instances are "
                     "in service (each joins the load balancer only once its server answers), "
                     "then lower it back (the oldest instances leave first, drained).")
    for key, verb in (("replaced", "replaced"), ("deleted", "deleted"),
                      ("restarted", "restarted in place"), ("created", "created")):
        names = impact.gpu_nodes.get(key, [])
        if not names:
            continue
        why = ""
        if key in ("replaced", "restarted"):
            causes = [p for p, _ in impact.gpu_causes.most_common()]
            why = f" because {', '.join(_few(causes))} changed" if causes else ""
        lines.append(f"GPU nodes {verb}: {_count(impact, names)}{why} "
                     f"({', '.join(_few(_named(impact, names)))}).")
    if impact.upgraded:
        cluster, old, new = impact.upgraded
        lines.append(f"Control plane upgraded in place: {cluster} {old} -> {new} (ACK rolls "
                     "the API servers; an upgrade is never rolled back). The node pools keep "
                     "their kubelet version until each is upgraded (ACK console, or "
                     "UpgradeClusterNodepool), one pool at a time within the version skew "
                     "Kubernetes allows; check the add-on versions the new minor needs.")
    if impact.new_nodes_only:
        lines.append("Running nodes keep the old settings: " + _per_pool(impact.new_nodes_only)
                     + " reach only nodes that join afterwards (a node pool is a template). "
                     "To roll them: drain and remove nodes one at a time (`kubectl drain`, "
                     "then remove the node with release in ACK) and let the pool add new "
                     "ones; for a fixed pool, raise desired_size first so capacity stays.")
    if impact.rolled:
        lines.append("Running nodes reconfigured in batches (ModifyNodePoolNodeConfig, "
                     "rolling_policy.max_parallelism at a time): " + _per_pool(impact.rolled)
                     + "; each node's kubelet or container runtime restarts, so its pods "
                     "may be disrupted while it does.")
    if impact.relabelled:
        lines.append("Running nodes relabelled in place (update_nodes): "
                     + _per_pool(impact.relabelled) + "; pods already running stay, a "
                     "NoExecute taint evicts those that do not tolerate it.")
    for key in ("replaced", "deleted", "orphaned"):
        items = impact.data.get(key, [])
        if items:
            what = "left behind, detached" if key == "orphaned" else key
            lines.append(f"Data {what}: " + ", ".join(f"{k} {n}" for k, n in _few_pairs(items))
                         + ".")
    if impact.scaled_in:
        lines.append("Running nodes the cloud releases in place: " + "; ".join(
            f"{name}: {why}" for name, why in impact.scaled_in[:4]) + ".")
    if impact.expired:
        lines.append("Data the cloud deletes in place: " + "; ".join(
            f"{name}: {why}" for name, why in impact.expired[:4]) + ".")
    if impact.with_parent:
        lines.append("Replaced or deleted with the resource they name (their own inputs are "
                     "the same, but they cannot outlive it): " + ", ".join(
                         f"{name} (with {parent})" for name, parent in
                         _few_pairs(impact.with_parent)) + ".")
    if impact.blocked:
        by_reason: dict[str, list[str]] = {}
        for name, why in impact.blocked:
            by_reason.setdefault(why, []).append(name)
        lines.append(f"Blocked by protection: {len(impact.blocked)} change(s), so `pulumi up` "
                     "would stop halfway: " + "; ".join(
                         f"{', '.join(_few(names))}: {why}" for why, names in by_reason.items())
                     + ".")
    if impact.refused:
        lines.append(f"Refused by the cloud: {len(impact.refused)} change(s), so `pulumi up` "
                     "would stop there: " + "; ".join(
                         f"{name}: {why}" for name, why in impact.refused[:4]) + ".")
    if impact.reserved.get("bought"):
        lines.append("Reserved capacity bought (non-refundable): "
                     + ", ".join(impact.reserved["bought"]) + ".")
    if impact.reserved.get("left_billing"):
        lines.append("Reserved capacity left billing to the end of its term (deleting it "
                     "refunds nothing): " + ", ".join(impact.reserved["left_billing"]) + ".")
    if impact.ignored:
        lines.append("Changes the provider ignores (the cloud keeps the old value): "
                     + "; ".join(f"{n} {p}" for n, p, _ in impact.ignored[:4]) + ".")
    if impact.reconfigured:
        lines.append(f"Reaches running nodes by Cloud Assistant: {', '.join(impact.reconfigured)}"
                     " get this plan's config.sh (the step list, the shared file system on or "
                     "off, mounts, NCCL settings, GPU counts) and run their bootstrap again "
                     "(the configuration channel's invocation runs again); changes of the "
                     "bootstrap's code reach new nodes only.")
    delta = impact.cost_after - impact.cost_before
    bound = "" if impact.cost_complete else " (not all of it: a changed resource has no price)"
    lines.append(f"Monthly cost: {impact.cost_before:,.0f} -> {impact.cost_after:,.0f} "
                 f"{impact.currency} ({delta:+,.0f}){bound}.")
    if report.secrets:
        lines.append(f"Not compared: {len(report.secrets)} secret value(s) "
                     f"({', '.join(_few(report.secrets))}) are placeholders offline, so a "
                     "changed secret does not show here.")
    counts = report.counts()
    restarts = sum(1 for c in report.changes if c.custom and c.restart)
    lines.append("Resources: " + ", ".join(
        f"{counts[kind]} {kind}" + (f" ({restarts} restart)" if kind == "update" and restarts
                                    else "") for kind in CHANGES) + ".")
    return lines


def _per_pool(paths: dict[str, list[str]]) -> str:
    """`pool-a (instanceTypes, dataDisks); pool-b (tags)`."""
    return "; ".join(f"{pool} ({', '.join(items)})" for pool, items in paths.items())


def _few_pairs(items: Sequence[tuple[str, str]], limit: int = 6) -> list[tuple[str, str]]:
    items = list(items)
    if len(items) <= limit:
        return items
    return [*items[:limit], ("…", f"{len(items) - limit} more")]


__all__ = ["ChangeFinding", "ChangeReport", "Impact", "change_report", "summary_lines"]
