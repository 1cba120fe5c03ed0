"""The provider's update semantics per resource type (update_semantics.json): which input
changes replace a resource, restart an instance, or are silently ignored, with sources.

The data file:

Update semantics of every resource type gpu-infra can create: what a change of an input
does to the existing cloud resource. The diff of two plans (gpu_infra_tools/plan/diff.py)
and the per-field table in docs/update-policies.md read update_semantics.json; nothing
else states these rules.

Source: the upstream Terraform provider that pulumi-alicloud 4.x bridges,
  github.com/aliyun/terraform-provider-alicloud at commit 81c43b6727a09e9d (2026-08-21,
  master; its ForceNew sets equal tag v2.0.0-beta3 for every type below), file `file`,
  `line` = the line of the schema flag or of the update code quoted. The 4.0.0 Python SDK
  docstrings drop the "(ForceNew)" marks, so they are not the source here.
Kubernetes objects (`kubernetes:` tokens, `tf` pulumi-kubernetes): forceNewProperties in
  pulumi/pulumi-kubernetes provider/pkg/provider/diff.go at the commit of the file's
  `kubernetes_provider` entry: `.metadata.name` and `.metadata.namespace` of every kind, and
  the kind's own list; everything else is patched in place by server-side apply.
Paths are Pulumi input names (camelCase, as the plan records them); a nested field is
  `block.field` (list elements and one-element blocks alike).

Per type:
  replace:    ForceNew inputs: a change replaces the resource (Pulumi: create the new one,
              then delete the old one, unless deleteBeforeReplace). `computed: true` marks
              Optional+Computed ones: removing the input keeps the value (no diff).
  restart:    in-place updates that stop and start (`stop-start`) or reboot (`reboot`) a
              running instance.
  ignored:    changes the provider accepts and never applies (the cloud keeps the old value).
  suppressed: inputs whose changes the provider's DiffSuppressFunc hides unless the inputs
              in `applies_when` have those values (then the field's other rules apply).
  nodes:      for node pools, how an in-place update reaches the pool's nodes (`how`):
              new-nodes (running nodes keep the old value), running-nodes (applied to
              them), scale (nodes added or removed), rolling (applied node by node),
              pool (the pool's own settings: no node is touched by the update).
  kept_if_removed: in-place Optional+Computed inputs: removing one keeps the cloud's value
              (no diff), so the removal does nothing.
  on_delete:  what deleting (and so replacing) the resource does beyond removing it.
  unique_name: the input holding a name the cloud keeps unique (per account or region); a
              create-before-delete replacement with that name unchanged collides on it.
  billing:    prepaid = paid for a term up front; deleting it refunds nothing.
Anything not listed changes in place without a restart. What the cloud refuses that the
diff accepts (values that may only grow, one-step upgrades, deletion protection) is in
update_preconditions.json.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

SEMANTICS_FILE = Path(__file__).with_name("update_semantics.json")


@dataclass(frozen=True)
class Rule:
    """What changing one input path does, and where the provider says so."""

    path: str
    line: int
    note: str = ""
    how: str = ""
    """For restarts: `stop-start` or `reboot`; for node pools' `nodes`: new-nodes,
    running-nodes, scale, rolling or pool."""
    computed: bool = False
    """Optional+Computed: removing the input keeps the cloud's value (no diff)."""
    applies_when: Mapping[str, Any] = field(default_factory=dict)
    """For suppressed fields: the inputs under which the change is not suppressed."""


@dataclass(frozen=True)
class ResourceSemantics:
    """The update semantics of one type token."""

    type: str
    tf: str
    file: str
    replace: Mapping[str, Rule]
    restart: Mapping[str, Rule]
    ignored: Mapping[str, Rule]
    suppressed: Mapping[str, Rule]
    nodes: Mapping[str, Rule] = field(default_factory=dict)
    """Node pools: how an in-place update of each input reaches the pool's nodes."""
    kept_if_removed: Mapping[str, Rule] = field(default_factory=dict)
    """In-place Optional+Computed inputs: removing one keeps the cloud's value."""
    on_delete: Rule | None = None
    unique_name: str | None = None
    billing: str | None = None
    notes: str = ""

    def source(self, rule: Rule) -> str:
        """`alicloud/resource_alicloud_instance.go:467`."""
        return f"{self.file}:{rule.line}"

    def replacing(self, path: str, inputs: Mapping[str, Any]) -> Rule | None:
        """The ForceNew rule a change at `path` hits, given the resource's new `inputs`
        (None when the change is in place or suppressed)."""
        if self._suppressed(path, inputs):
            return None
        return _covering(self.replace, path)

    def reaching_nodes(self, path: str) -> Rule | None:
        """How a node pool's in-place update at `path` reaches its nodes (None: not at all)."""
        return _covering(self.nodes, path)

    def kept_when_removed(self, path: str) -> Rule | None:
        """The rule under which removing the input at `path` keeps the cloud's value."""
        rule = self.replace.get(path)
        if rule is not None and rule.computed:
            return rule
        return _covering(self.kept_if_removed, path)

    def restarting(self, path: str) -> Rule | None:
        """The rule that makes a change at `path` stop/start or reboot the instance."""
        return _covering(self.restart, path)

    def ignoring(self, path: str, inputs: Mapping[str, Any]) -> Rule | None:
        """The rule under which the provider never applies a change at `path`: listed as
        ignored, or suppressed in the resource's current state."""
        return _covering(self.ignored, path) or self._suppressed(path, inputs)

    def _suppressed(self, path: str, inputs: Mapping[str, Any]) -> Rule | None:
        rule = _covering(self.suppressed, path)
        if rule is None:
            return None
        applies = all(inputs.get(key) == value for key, value in rule.applies_when.items())
        return None if applies else rule


def _covering(rules: Mapping[str, Rule], path: str) -> Rule | None:
    """The rule for `path` itself or for the nearest enclosing input (`dataDisks.size`
    for `dataDisks.size`, `accessMode` for `accessMode.modeValue`)."""
    while True:
        if path in rules:
            return rules[path]
        if "." not in path:
            return None
        path = path.rsplit(".", 1)[0]


def _rules(section: Mapping[str, Any] | None) -> dict[str, Rule]:
    return {path: Rule(path=path, **spec) for path, spec in (section or {}).items()}


@cache
def _load() -> tuple[dict[str, Any], dict[str, ResourceSemantics]]:
    data = json.loads(SEMANTICS_FILE.read_text(encoding="utf-8"))
    table = {}
    for token, spec in data["resources"].items():
        on_delete = spec.get("on_delete")
        table[token] = ResourceSemantics(
            type=token, tf=spec["tf"], file=spec["file"], replace=_rules(spec.get("replace")),
            restart=_rules(spec.get("restart")), ignored=_rules(spec.get("ignored")),
            suppressed=_rules(spec.get("suppressed")),
            nodes=_rules(spec.get("nodes")), kept_if_removed=_rules(spec.get("kept_if_removed")),
            on_delete=Rule(path="", **on_delete) if on_delete else None,
            unique_name=spec.get("unique_name"), billing=spec.get("billing"),
            notes=spec.get("notes", ""))
    return data["provider"], table


def semantics(type_token: str) -> ResourceSemantics:
    """The semantics of `type_token`; KeyError (naming the file to extend) if not covered."""
    table = _load()[1]
    if type_token not in table:
        raise KeyError(f"{type_token} has no update semantics; add it to {SEMANTICS_FILE.name}")
    return table[type_token]


def covered_types() -> frozenset[str]:
    """Every type token the file describes."""
    return frozenset(_load()[1])


def provider_source() -> dict[str, Any]:
    """Repository, commit and date of the provider source the rules were read from."""
    return dict(_load()[0])
