"""The change report's test of each change against the update preconditions
(gpu_infra_facts.update_preconditions): an edit the provider's diff accepts and the cloud API
refuses, or carries out by deleting data or nodes, with the reason and the way instead.

Each precondition row names its check; CHECKS holds one function per check name. A check gets
the change, its row and the Plans (both plans' resources, for checks that read neighbours: the
vSwitches of a VPC, a claim's StorageClass, the instances bound to a key pair) and returns what
is refused in a few words (`size 4000 -> 3200`), or None when the change passes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.update_preconditions import DELETE, Precondition, preconditions
from gpu_infra_tools.plan.diff import ResourceChange

QUANTITY = re.compile(r"^([0-9.]+)([KMGTPE]i|[kMGTPE]|m)?$")
"""A Kubernetes quantity (`20480Gi`, `1Ti`, `500G`, `100m`)."""
QUANTITY_FACTORS = {None: 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
                    "E": 1e18, "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30,
                    "Ti": 2.0 ** 40, "Pi": 2.0 ** 50, "Ei": 2.0 ** 60}


@dataclass
class Plans:
    """What the checks read beside the change itself, from both plans."""

    changes: Sequence[ResourceChange]
    switch_zones: dict[str, str] = field(default_factory=dict)
    """vSwitch id -> zone (both plans)."""
    bound_keys: set[str] = field(default_factory=set)
    """Key pair names that instances and scaling configurations of the base plan still use
    when old resources are deleted: those the new plan keeps with the same key (replaced or
    deleted ones are gone by then, Pulumi deletes dependants first)."""
    expandable_classes: dict[str, bool] = field(default_factory=dict)
    """StorageClass name (new plan) -> allowVolumeExpansion is true."""
    replaced: set[str] = field(default_factory=set)
    """Ids (base plan) of resources replaced or deleted."""

    @classmethod
    def of(cls, changes: Sequence[ResourceChange]) -> Plans:
        """Index `changes` (plan.diff.diff_records) for the checks."""
        plans = cls(changes)
        for change in changes:
            for record in (change.base, change.new):
                if record and change.type == t.VSWITCH and record.get("id"):
                    zone = (record.get("inputs") or {}).get("zoneId")
                    plans.switch_zones[str(record["id"])] = str(zone)
            key = change.base_inputs.get("keyName")
            if change.type in (t.INSTANCE, t.SCALING_CONFIGURATION) and key \
                    and change.change in ("same", "update") and change.inputs.get("keyName") == key:
                plans.bound_keys.add(str(key))
            if change.type == t.K8S_STORAGE_CLASS and change.new is not None:
                name = (change.inputs.get("metadata") or {}).get("name")
                plans.expandable_classes[str(name)] = change.inputs.get(
                    "allowVolumeExpansion") is True
            if change.change in ("replace", "delete") and change.base is not None \
                    and change.base.get("id"):
                plans.replaced.add(str(change.base["id"]))
        return plans

    def base_switches(self, vpc_id: str) -> list[tuple[str, str]]:
        """(name, CIDR) of the base plan's vSwitches in the VPC `vpc_id`."""
        return [(c.name, str(c.base_inputs["cidrBlock"])) for c in self.changes
                if c.type == t.VSWITCH and c.base is not None
                and c.base_inputs.get("vpcId") == vpc_id and c.base_inputs.get("cidrBlock")]


Check = Callable[[ResourceChange, Precondition, Plans], str | None]


def refusals(change: ResourceChange, plans: Plans) -> list[str]:
    """Why the cloud refuses `change`, one line per precondition it fails: what is refused,
    the API's rule, the way instead and the source."""
    return [f"{what}: {row.api} refuses {row.refuses}; instead: {row.instead} ({row.source})"
            for row, what in _failed(change, plans) if row.refuses]


def deletions(change: ResourceChange, plans: Plans, loses: str) -> dict[str, str]:
    """What the cloud deletes while carrying out `change` (rows with `does` that lose `loses`:
    data or nodes): input path -> what changes, what the API does, the way instead and the
    source."""
    return {row.path: f"{what}: {row.api} will {row.does}; instead: {row.instead} "
                      f"({row.source})"
            for row, what in _failed(change, plans) if row.does and row.loses == loses}


def _failed(change: ResourceChange, plans: Plans) -> list[tuple[Precondition, str]]:
    """(row, what happens in a few words) of every row whose check `change` fails."""
    rows = preconditions(change.type)
    if not rows or change.change == "same" or change.base is None:
        return []
    paths = [DELETE] if change.change in ("replace", "delete") else []
    if change.change in ("update", "replace"):
        paths += change.because
    failed = []
    for path in dict.fromkeys(paths):
        row = rows.get(path)
        what = CHECKS[row.check](change, row, plans) if row else None
        if row and what:
            failed.append((row, what))
    return failed


def _value(inputs: Mapping[str, Any], path: str) -> Any:
    value: Any = inputs
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _sides(change: ResourceChange, path: str) -> tuple[Any, Any]:
    return _value(change.base_inputs, path), _value(change.inputs, path)


def quantity(value: Any) -> float | None:
    """A number or Kubernetes quantity as a float (None if it is neither)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    match = QUANTITY.match(str(value).strip()) if isinstance(value, str) else None
    return float(match.group(1)) * QUANTITY_FACTORS[match.group(2)] if match else None


def version(text: str) -> tuple[int, ...]:
    """`1.34.1-aliyun.1` -> (1, 34, 1, 1): the order ACK upgrades in."""
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _network(text: Any) -> ipaddress.IPv4Network | None:
    """An IPv4 CIDR block (None for anything else)."""
    try:
        return ipaddress.IPv4Network(str(text), strict=False)
    except ValueError:
        return None


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def never_lower(change: ResourceChange, row: Precondition, _: Plans) -> str | None:
    """A number or quantity that may only grow."""
    before, after = _sides(change, row.path)
    old, new = quantity(before), quantity(after)
    if old is None or new is None or new >= old:
        return None
    return f"{row.path} {_shown(before)} -> {_shown(after)}"


def kubernetes_upgrade(change: ResourceChange, row: Precondition, _: Plans) -> str | None:
    """Up only, one minor version at a time."""
    before, after = _sides(change, row.path)
    if not isinstance(before, str) or not isinstance(after, str):
        return None
    old, new = version(before), version(after)
    if new < old:
        return f"{row.path} {before} -> {after} is a downgrade"
    if len(old) > 1 and len(new) > 1 and (new[0] > old[0] or new[1] > old[1] + 1):
        return f"{row.path} {before} -> {after} skips a minor version"
    return None


def holds_vswitches(change: ResourceChange, row: Precondition, plans: Plans) -> str | None:
    """A VPC CIDR that still holds every vSwitch the VPC has when it is changed."""
    after = change.inputs.get(row.path)
    vpc_id = (change.base or {}).get("id")
    network = _network(after)
    if change.change != "update" or network is None or not vpc_id:
        return None
    outside = [f"{name} {cidr}" for name, cidr in plans.base_switches(str(vpc_id))
               if (switch := _network(cidr)) is not None and not switch.subnet_of(network)]
    if not outside:
        return None
    return (f"{row.path} {change.base_inputs.get(row.path)} -> {after} leaves running "
            f"vSwitch(es) outside it ({', '.join(outside[:3])})")


def no_overlap(change: ResourceChange, row: Precondition, plans: Plans) -> str | None:
    """A replacement vSwitch's CIDR overlaps a vSwitch of its VPC that is still there when it
    is created (Pulumi creates before it deletes)."""
    vpc_id = change.base_inputs.get("vpcId")
    after = change.inputs.get(row.path)
    network = _network(after)
    if change.change != "replace" or network is None or not vpc_id \
            or str(vpc_id) in plans.replaced or change.inputs.get("vpcId") != vpc_id:
        return None
    clashes = [f"{name} {cidr}" for name, cidr in plans.base_switches(str(vpc_id))
               if (switch := _network(cidr)) is not None and switch.overlaps(network)]
    if not clashes:
        return None
    return (f"the new {row.path} {after} overlaps vSwitch(es) still in the VPC "
            f"({', '.join(clashes[:3])})")


def claim_resize(change: ResourceChange, row: Precondition, plans: Plans) -> str | None:
    """A claim's storage request: never lower; higher only through an expandable class."""
    before, after = _sides(change, row.path)
    old, new = quantity(before), quantity(after)
    if old is None or new is None or new == old:
        return None
    if new < old:
        return f"{row.path} {before} -> {after} is smaller"
    claim_class = _value(change.inputs, "spec.storageClassName")
    if claim_class == "":
        return (f"{row.path} {before} -> {after} on a statically bound claim "
                "(storageClassName \"\")")
    if plans.expandable_classes.get(str(claim_class)) is False:
        return (f"{row.path} {before} -> {after} through StorageClass {claim_class}, "
                "which does not allow volume expansion")
    return None


def same_zone(change: ResourceChange, row: Precondition, plans: Plans) -> str | None:
    """An instance moved to a vSwitch of another zone."""
    before, after = _sides(change, row.path)
    old, new = plans.switch_zones.get(str(before)), plans.switch_zones.get(str(after))
    if change.change != "update" or not old or not new or old == new:
        return None
    return f"moves the instance from zone {old} to {new}"


def unbound_key(change: ResourceChange, _: Precondition, plans: Plans) -> str | None:
    """A key pair deleted (or replaced) while instances use it."""
    name = change.base_inputs.get("keyPairName")
    return f"key pair {name} is bound to the nodes" if str(name) in plans.bound_keys else None


CHECKS: dict[str, Check] = {
    "never_lower": never_lower, "kubernetes_upgrade": kubernetes_upgrade,
    "holds_vswitches": holds_vswitches, "no_overlap": no_overlap,
    "claim_resize": claim_resize,
    "same_zone": same_zone, "unbound_key": unbound_key}
"""Check name (update_preconditions.json `check`) -> its test."""


__all__ = ["CHECKS", "Plans", "deletions", "quantity", "refusals", "version"]
