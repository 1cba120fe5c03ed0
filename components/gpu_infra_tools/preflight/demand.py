"""What a stack's offline plan asks of the account: its fleets (instance types, zones,
billing, how many instances at `pulumi up` and at most), the images, KMS keys, buckets,
alert contacts and the ACK version and add-ons it names, each with the stack field it comes
from. Read from the planned resources, so it holds what `pulumi up` would really send.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeGuard

from gpu_infra.schema import CLUSTER_KEY
from gpu_infra_facts import types as t
from gpu_infra_tools.plan.engine import UNKNOWN_MARK, Plan, PlannedResource

IMAGE_KEYS = ("imageId", "baseImage")
KMS_KEY_INPUTS = ("kmsKeyId", "systemDiskKmsKeyId", "encryptionKey", "kmsEncryptionKeyId",
                  "kmsMasterKeyId", "keyId")


@dataclass(frozen=True)
class Fleet:
    """Like instances the plan creates: fixed nodes, a scaling group or a node pool."""

    name: str
    """The planned resource (a fixed fleet: its first node)."""
    path: str
    """The stack field naming its instance types."""
    instance_types: tuple[str, ...]
    zones: tuple[str, ...]
    spot: bool
    prepaid: bool
    at_up: int
    """Instances created by `pulumi up` itself (fixed nodes, a pool's desired size, a group's
    minimum)."""
    peak: int
    """The most instances at once (a scaling group's or pool's maximum)."""
    image_id: str | None
    system_disk: tuple[str, int] | None
    """(category, GiB) of the system disk, when planned."""
    spot_price_limit: float | None
    on_demand_too: bool = False
    """A spot fleet that also runs pay-as-you-go instances (a scaling group's on-demand base
    or share)."""

    @property
    def fixed(self) -> bool:
        """Nodes pinned at `pulumi up` (ECS instances), not launched by a scaler later."""
        return self.at_up == self.peak


@dataclass(frozen=True)
class Named:
    """A name or id the stack refers to, and where."""

    value: str
    path: str
    detail: str = ""


@dataclass(frozen=True)
class Demand:
    """Everything the checks look at."""

    stack: str
    region: str
    fleets: tuple[Fleet, ...]
    images: tuple[Named, ...]
    kms_keys: tuple[Named, ...]
    buckets: tuple[Named, ...]
    contacts: tuple[Named, ...]
    """Contact name, its e-mail in `detail`."""
    ack_version: Named | None
    ack_spec: str
    addons: tuple[Named, ...]
    """Add-on name, its pinned version in `detail`."""


def field_path(config: Any, value: object, fallback: str) -> str:
    """The path of the first stack field holding `value` (`monitoring.contacts[0].email`; a
    list holding it counts: the list's path), prefixed by the config key; `fallback` where no
    field holds it (a name the program derives)."""
    found = next(_paths(config, value, ""), None)
    return f"{CLUSTER_KEY}.{found}" if found else fallback


def _paths(node: object, value: object, prefix: str) -> Iterator[str]:
    if node == value or (isinstance(node, list) and value in node):
        yield prefix
        return
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _paths(child, value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _paths(child, value, f"{prefix}[{index}]")


def _known(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value) and UNKNOWN_MARK not in value


def _number(value: object, default: int = 0) -> int:
    try:
        return int(float(str(value)))
    except ValueError:
        return default


def read_demand(plan: Plan) -> Demand:
    """The demand of `plan` on the account."""
    config = plan.cluster.model_dump(mode="json")
    zones = {r.id: r.inputs.get("zoneId") for r in plan.by_type(t.VSWITCH)}
    fleets = [*_fixed_fleets(plan, config, zones), *_scaling_fleets(plan, config, zones),
              *_node_pools(plan, config, zones), *_image_builds(plan, config, zones)]
    created_keys = {r.id for r in plan.by_type(t.KMS_KEY)}
    images: dict[str, Named] = {}
    keys: dict[str, Named] = {}
    for resource in plan.resources:
        for key in IMAGE_KEYS:
            image = resource.inputs.get(key)
            if _known(image) and image not in images:
                images[image] = Named(image, field_path(config, image, f"{CLUSTER_KEY}.fleet."
                                                        "image (the pinned default)"))
        for key_id in _kms_key_ids(resource):
            if key_id not in created_keys and key_id not in keys:
                keys[key_id] = Named(key_id, field_path(config, key_id, resource.name))
    cluster = next(iter(plan.by_type(t.MANAGED_KUBERNETES)), None)
    version = cluster.inputs.get("version") if cluster else None
    return Demand(
        stack=plan.stack_name, region=plan.cluster.region, fleets=tuple(fleets),
        images=tuple(images.values()), kms_keys=tuple(keys.values()),
        buckets=tuple(Named(r.inputs["bucket"], f"{CLUSTER_KEY}.storage.buckets ({r.name})")
                      for r in plan.by_type(t.BUCKET) if _known(r.inputs.get("bucket"))),
        contacts=tuple(Named(str(r.inputs.get("alarmContactName")),
                             field_path(config, r.inputs.get("channelsMail"),
                                        f"{CLUSTER_KEY}.monitoring.contacts"),
                             str(r.inputs.get("channelsMail") or ""))
                       for r in plan.by_type(t.ALARM_CONTACT)),
        ack_version=(Named(version, field_path(config, version, f"{CLUSTER_KEY}.ack"))
                     if _known(version) else None),
        ack_spec=str(cluster.inputs.get("clusterSpec", "")) if cluster else "",
        addons=tuple(_addons(plan, config)))


def _kms_key_ids(resource: PlannedResource) -> Iterator[str]:
    def walk(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            for key, child in node.items():
                if key in KMS_KEY_INPUTS and _known(child):
                    yield str(child)
                else:
                    yield from walk(child)
        elif isinstance(node, list):
            for child in node:
                yield from walk(child)
    yield from walk(resource.inputs)


def _disk(inputs: dict[str, Any]) -> tuple[str, int] | None:
    category = inputs.get("systemDiskCategory")
    return (str(category), _number(inputs.get("systemDiskSize"), 40)) if category else None


def _limit(inputs: dict[str, Any]) -> float | None:
    limits = inputs.get("spotPriceLimits") or inputs.get("spotPriceLimit") or []
    values = [float(item["priceLimit"]) for item in limits
              if isinstance(item, dict) and item.get("priceLimit") is not None]
    return max(values) if values else None


def _fixed_fleets(plan: Plan, config: Any, zones: dict[str | None, Any]) -> Iterator[Fleet]:
    groups: dict[tuple[Any, ...], list[PlannedResource]] = {}
    for node in plan.by_type(t.INSTANCE):
        inputs = node.inputs
        key = (inputs.get("instanceType"), zones.get(inputs.get("vswitchId")),
               inputs.get("spotStrategy", "NoSpot"), inputs.get("instanceChargeType"),
               inputs.get("imageId"))
        groups.setdefault(key, []).append(node)
    for (kind, zone, spot, charge, image), nodes in groups.items():
        first = nodes[0].inputs
        yield Fleet(nodes[0].name, field_path(config, kind, nodes[0].name), (str(kind),),
                    (str(zone),) if zone else (), spot not in (None, "NoSpot"),
                    charge == "PrePaid", len(nodes), len(nodes),
                    image if _known(image) else None, _disk(first), _limit(first))


def _scaling_fleets(plan: Plan, config: Any, zones: dict[str | None, Any]) -> Iterator[Fleet]:
    groups = {r.id: r for r in plan.by_type(t.SCALING_GROUP)}
    for configuration in plan.by_type(t.SCALING_CONFIGURATION):
        inputs = configuration.inputs
        group = groups.get(inputs.get("scalingGroupId"))
        if group is None:
            continue
        types = tuple(inputs.get("instanceTypes") or [inputs.get("instanceType")])
        yield Fleet(group.name, field_path(config, list(types), field_path(
            config, types[0], configuration.name)), tuple(str(t) for t in types),
            tuple(str(zones[v]) for v in group.inputs.get("vswitchIds", []) if v in zones),
            inputs.get("spotStrategy", "NoSpot") != "NoSpot", False,
            _number(group.inputs.get("minSize")), _number(group.inputs.get("maxSize")),
            inputs.get("imageId") if _known(inputs.get("imageId")) else None, _disk(inputs),
            _limit(inputs), on_demand_too=any(_number(group.inputs.get(key)) > 0 for key in (
                "onDemandBaseCapacity", "onDemandPercentageAboveBaseCapacity")))


def _node_pools(plan: Plan, config: Any, zones: dict[str | None, Any]) -> Iterator[Fleet]:
    for pool in plan.by_type(t.NODE_POOL):
        inputs = pool.inputs
        scaling = inputs.get("scalingConfig") or {}
        desired = _number(inputs.get("desiredSize"), 0)
        at_up = _number(scaling.get("minSize"), desired) if scaling.get("enable") else desired
        peak = _number(scaling.get("maxSize"), desired) if scaling.get("enable") else desired
        types = [str(t) for t in inputs.get("instanceTypes", [])]
        yield Fleet(pool.name, field_path(config, types, field_path(
            config, types[0] if types else "", pool.name)), tuple(types),
            tuple(str(zones[v]) for v in inputs.get("vswitchIds", []) if v in zones),
            inputs.get("spotStrategy", "NoSpot") not in ("NoSpot", None),
            inputs.get("instanceChargeType") == "PrePaid", at_up, peak,
            inputs.get("imageId") if _known(inputs.get("imageId")) else None, _disk(inputs),
            _limit(inputs))


def _image_builds(plan: Plan, config: Any, zones: dict[str | None, Any]) -> Iterator[Fleet]:
    """An image pipeline's build instance: one, launched by the execution at `pulumi up`."""
    for pipeline in plan.by_type(t.IMAGE_PIPELINE):
        inputs = pipeline.inputs
        kind = str(inputs.get("instanceType"))
        zone = zones.get(inputs.get("vswitchId"))
        image = inputs.get("baseImage")
        yield Fleet(pipeline.name, field_path(config, kind, pipeline.name), (kind,),
                    (str(zone),) if zone else (), False, False, 1, 1,
                    image if _known(image) else None,
                    ("cloud_essd", _number(inputs.get("systemDiskSize"), 40)), None)


def _addons(plan: Plan, config: Any) -> Iterator[Named]:
    seen: set[str] = set()
    cluster = next(iter(plan.by_type(t.MANAGED_KUBERNETES)), None)
    pinned = [*(cluster.inputs.get("addons", []) if cluster else []),
              *(r.inputs for r in plan.by_type(t.KUBERNETES_ADDON))]
    for addon in pinned:
        name, version = addon.get("name"), addon.get("version")
        if _known(name) and name not in seen:
            seen.add(name)
            yield Named(str(name), field_path(config, version, f"{CLUSTER_KEY}.ack.addon_versions"
                                              f" ({name}, the pinned default)")
                        if _known(version) else f"{CLUSTER_KEY}.ack", str(version or ""))
