"""What applying a plan does to what an earlier plan created: per resource (matched by URN,
or by a Pulumi alias) create / update / replace / delete / same, whether an update restarts
an instance, and the input paths that cause it, from the provider's update semantics
(gpu_infra_facts.update_semantics).

Works on plan records (`plan --json` resources), so the base may come from a file written by
an older program. Like `pulumi preview`:
- a replaced resource gets a new id, unknown until it exists, so every input holding its id
  is a change too (which may replace the dependant in turn);
- removing an Optional+Computed input keeps the cloud's value (no change);
- `ignoreChanges` paths are not compared; `replaceOnChanges` paths replace;
- a resource whose `replaceWith` lists a replaced resource, or whose `deletedWith` is one, is
  replaced too (because `replaceWith` / `deletedWith`, the engine's replace keys: pulumi
  step_generator.go `diff` and `findDependentCascadeReplacements`), and a deleted resource
  whose `deletedWith` goes too is taken by the cloud with it (`goes_with`: Pulumi calls no
  Delete for it, step.go `isDeletedWith`);
- secrets are placeholders in both plans, so a changed secret is invisible offline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_infra_facts.update_semantics import ResourceSemantics, semantics

CHANGES = ("create", "update", "replace", "delete", "same")
"""The change kinds, in the order reports list them."""
CASCADE_KEYS = ("replaceWith", "deletedWith")
"""The resource options that replace a resource with another (record keys, and the replace
keys the engine blames)."""


@dataclass
class ResourceChange:
    """What happens to one resource."""

    urn: str
    type: str
    name: str
    custom: bool
    change: str
    """One of CHANGES."""
    restart: bool = False
    """An in-place update that stops/starts or reboots the instance."""
    because: list[str] = field(default_factory=list)
    """Input paths whose change causes `change` (and `restart`)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Input path -> provider file:line of the rule that applies."""
    ignored: list[str] = field(default_factory=list)
    """Changed input paths the provider never applies."""
    kept: list[str] = field(default_factory=list)
    """Removed inputs the cloud keeps (Optional+Computed): no change, and no effect."""
    unknown: list[str] = field(default_factory=list)
    """Input paths unknown until a replaced resource they refer to exists."""
    goes_with: str | None = None
    """URN of the replaced or deleted resource this one is replaced or deleted with
    (`replaceWith` / `deletedWith`), when that is the cause."""
    base: dict[str, Any] | None = None
    """The base plan's record (None for a create)."""
    new: dict[str, Any] | None = None
    """The new plan's record (None for a delete)."""

    @property
    def record(self) -> dict[str, Any]:
        """The new record, or the base one for a delete."""
        return self.new if self.new is not None else self.base or {}

    @property
    def inputs(self) -> dict[str, Any]:
        """The resource's inputs in the plan it is in (the base one for a delete)."""
        return self.record.get("inputs") or {}

    @property
    def base_inputs(self) -> dict[str, Any]:
        """The resource's inputs in the base plan (empty for a create)."""
        return (self.base or {}).get("inputs") or {}

    def to_json(self) -> dict[str, Any]:
        """`change`, `restart`, `because` (and details when there are any)."""
        record: dict[str, Any] = {"change": self.change, "restart": self.restart,
                                  "because": self.because}
        for key, value in (("sources", self.sources), ("ignored", self.ignored),
                           ("keptWhenRemoved", self.kept), ("unknownUntilApply", self.unknown),
                           ("goesWith", self.goes_with)):
            if value:
                record[key] = value
        return record


def diff_records(base: Sequence[dict[str, Any]],
                 new: Sequence[dict[str, Any]]) -> list[ResourceChange]:
    """The change of every resource from `base` to `new` (plan records): the new plan's
    resources in its order, then the deleted ones in the base's order."""
    base_by_urn = {r["urn"]: r for r in base}
    matched: set[str] = set()
    changes: list[ResourceChange] = []
    for record in new:
        old = base_by_urn.get(record["urn"])
        if old is None:
            old = next((base_by_urn[a] for a in record.get("aliases", ())
                        if a in base_by_urn and a not in matched), None)
        if old is None:
            changes.append(_change(record, "create", new=record))
            continue
        matched.add(old["urn"])
        changes.append(_compare(old, record))
    changes += [_change(r, "delete", base=r) for r in base if r["urn"] not in matched]
    _cascade(changes)
    _deleted_with(changes)
    return changes


def _change(record: Mapping[str, Any], kind: str, **sides: Any) -> ResourceChange:
    return ResourceChange(urn=record["urn"], type=record["type"], name=record["name"],
                          custom=bool(record.get("custom")), change=kind, **sides)


def _compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> ResourceChange:
    change = _change(new, "same", base=old, new=new)
    if not new.get("custom") or old.get("inputs") == new.get("inputs"):
        return change
    rules = semantics(new["type"])
    ignore = new.get("ignoreChanges", ())
    paths = []
    for path, _, after in changed_paths(old.get("inputs"), new.get("inputs")):
        if _under(path, ignore):
            continue
        if after is None and rules.kept_when_removed(path) is not None:
            change.kept.append(path)
        else:
            paths.append(path)
    _classify(change, rules, paths, new.get("replaceOnChanges", ()))
    return change


def _classify(change: ResourceChange, rules: ResourceSemantics, paths: Sequence[str],
              replace_on: Sequence[str] = ()) -> None:
    """Set change/restart/because from the changed `paths` (already de-duplicated or not)."""
    inputs = change.inputs
    change.ignored, change.sources = [], {}
    replacing: list[str] = []
    restarting: list[str] = []
    updating: list[str] = []
    for path in dict.fromkeys(paths):
        rule = rules.replacing(path, inputs)
        if rule is not None or _under(path, replace_on) or path in CASCADE_KEYS:
            replacing.append(path)
            if rule is not None:
                change.sources[path] = rules.source(rule)
            continue
        ignored = rules.ignoring(path, inputs)
        if ignored is not None:
            change.ignored.append(path)
            change.sources[path] = rules.source(ignored)
            updating.append(path)
            continue
        rule = rules.restarting(path)
        if rule is not None:
            restarting.append(path)
            change.sources[path] = rules.source(rule)
        else:
            updating.append(path)
    if replacing:
        change.change, change.restart, change.because = "replace", False, replacing
    elif restarting or updating:
        change.change, change.restart = "update", bool(restarting)
        change.because = restarting + updating
    else:
        change.change, change.restart, change.because = "same", False, []


def _cascade(changes: list[ResourceChange]) -> None:
    """Inputs holding the id of a replaced resource are unknown until it exists: a change of
    each dependant (a replacement where the input is ForceNew), repeated down the graph.

    Works in waves (every replacement found so far at once), and reads each dependant's
    string inputs once: a fleet-wide dependant (an alarm over every node) would otherwise be
    walked once per replaced node."""
    dependants: dict[str, list[ResourceChange]] = {}
    for change in changes:
        if change.base is not None and change.new is not None and change.custom:
            for urn in change.new.get("dependencies", ()):
                dependants.setdefault(urn, []).append(change)
    strings: dict[int, list[tuple[str, str]]] = {}
    wave = [c for c in changes if c.change == "replace"]
    with_them = _replaced_with(changes)
    while wave:
        wave += _replace_with(wave, with_them)
        new_ids: dict[int, tuple[ResourceChange, set[str]]] = {}
        for replaced in wave:
            resource_id = (replaced.new or {}).get("id")
            if resource_id:
                for dependant in dependants.get(replaced.urn, ()):
                    new_ids.setdefault(id(dependant), (dependant, set()))[1].add(resource_id)
        wave = []
        for dependant, ids in new_ids.values():
            if id(dependant) not in strings:
                strings[id(dependant)] = [(path, value) for path, value in
                                          leaves(dependant.inputs) if isinstance(value, str)]
            holds = _finder(ids)
            fresh = list(dict.fromkeys(path for path, value in strings[id(dependant)]
                                       if path not in dependant.unknown and holds(value)))
            if not fresh:
                continue
            dependant.unknown += fresh
            was = dependant.change
            _classify(dependant, semantics(dependant.type), [*dependant.because, *fresh],
                      (dependant.new or {}).get("replaceOnChanges", ()))
            if dependant.change == "replace" and was != "replace":
                wave.append(dependant)


def _replaced_with(changes: Sequence[ResourceChange],
                   ) -> dict[str, list[tuple[str, ResourceChange]]]:
    """URN -> (option key, change) of the resources the new plan replaces with it."""
    with_them: dict[str, list[tuple[str, ResourceChange]]] = {}
    for change in changes:
        if change.base is None or change.new is None:
            continue
        for urn in change.new.get("replaceWith", ()):
            with_them.setdefault(urn, []).append(("replaceWith", change))
        if change.new.get("deletedWith"):
            with_them.setdefault(change.new["deletedWith"], []).append(("deletedWith", change))
    return with_them


def _replace_with(wave: Sequence[ResourceChange],
                  with_them: Mapping[str, Sequence[tuple[str, ResourceChange]]],
                  ) -> list[ResourceChange]:
    """Replace the resources `replaceWith` or `deletedWith` the replacements of `wave` (the
    engine checks replaceWith first), repeated down their own; returns those newly replaced."""
    replaced: list[ResourceChange] = []
    pending = list(wave)
    while pending:
        parent = pending.pop()
        for key, change in with_them.get(parent.urn, ()):
            if change.change == "replace":
                continue
            change.change, change.restart = "replace", False
            change.because = [key, *(p for p in change.because if p != key)]
            change.goes_with = parent.urn
            replaced.append(change)
            pending.append(change)
    return replaced


def _deleted_with(changes: Sequence[ResourceChange]) -> None:
    """A deleted resource whose `deletedWith` is deleted or replaced too goes with it: the
    cloud deletes it, Pulumi calls no Delete (pulumi step.go isDeletedWith)."""
    going = {urn for c in changes if c.change in ("delete", "replace")
             for urn in (c.urn, (c.base or {}).get("urn")) if urn}
    for change in changes:
        parent = (change.base or {}).get("deletedWith")
        if change.change == "delete" and parent in going:
            change.goes_with = parent


def _finder(ids: set[str]) -> Callable[[str], bool]:
    """Whether a string holds one of `ids` (a plain search for one, one pattern for many)."""
    if len(ids) == 1:
        [only] = ids
        return lambda value: only in value
    pattern = re.compile("|".join(re.escape(i) for i in sorted(ids)))
    return lambda value: pattern.search(value) is not None


def changed_paths(old: Any, new: Any, prefix: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, old leaf, new leaf) for every leaf that differs; paths join mapping keys with
    dots and leave out list positions (`dataDisks.size`). A list of scalars is one leaf."""
    if old == new:
        return
    if isinstance(old, dict) or isinstance(new, dict):
        old_map = old if isinstance(old, dict) else {}
        new_map = new if isinstance(new, dict) else {}
        for key in dict.fromkeys([*old_map, *new_map]):
            yield from changed_paths(old_map.get(key), new_map.get(key), _join(prefix, key))
        return
    if _is_block_list(old) or _is_block_list(new):
        old_list = old if isinstance(old, list) else []
        new_list = new if isinstance(new, list) else []
        for index in range(max(len(old_list), len(new_list))):
            yield from changed_paths(old_list[index] if index < len(old_list) else None,
                                     new_list[index] if index < len(new_list) else None, prefix)
        return
    yield prefix, old, new


def leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) of every leaf of an input value, paths as in changed_paths."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, _join(prefix, key))
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, prefix)
    else:
        yield prefix, value


def _is_block_list(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(item, dict) for item in value)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _under(path: str, roots: Sequence[str]) -> bool:
    """`path` is one of `roots` (Pulumi property paths) or inside one."""
    return any(path == root or path.startswith(root + ".") or path.startswith(root + "[")
               for root in roots)
