"""User-data sizes (issue 37): every shipped ECS stack and the largest stack of every shape the
schema allows, in bytes and as a share of ECS's 32 KB limit, rendered with the longest values
the cloud may assign (gpu_infra.nodeplan.user_data.worst_case_spec).

A shape starts from an ECS layout's largest stack (LARGEST: random-looking names of the
longest lengths the schema takes, the most data disks, the longest GRID object key, every
optional section that reaches the nodes) and changes one or two of its choices. The choices
are read from the layout's model, not listed: each Literal and bool field takes its other
values, each optional field None and each list field []. Those that change what the nodes
get (the worst-case BootstrapSpec of each kind of node) when changed alone, or together
with another where the schema takes them only together, are the layout's axes; every axis,
and every pair of axes, is a shape. A shape the schema or the validators refuse is reported
as refused.

    .venv/bin/python -m bench.user_data            # the table on stdout
    .venv/bin/python -m bench.user_data --json
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gpu_infra.blocks.bootstrap import BootstrapSpec, user_data, user_data_size
from gpu_infra.knowhow import errors_in
from gpu_infra.nodeplan import judge_stack, node_plan
from gpu_infra.nodeplan.user_data import stand_in, worst_case_spec
from gpu_infra.schema import ClusterConfig, ConfigError, load_cluster_config
from gpu_infra.schema.loader import parse_cluster_config
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra_facts.allowed import ESS_MAX_INSTANCE_TYPES, INSTANCE_TYPE_MAX_CHARS
from gpu_infra_facts.node_stack import USER_DATA_MAX_BYTES

ROOT = Path(__file__).resolve().parent.parent
STACKS = ROOT / "stacks"
REGION = "cn-hangzhou"
ROOM = USER_DATA_MAX_BYTES // 2
"""The most user data a shipped stack or a largest stack may take: the other half is for
what later releases add."""

LONGEST_NAME = "a" + stand_in(23, "name")
"""The longest cluster name the schema takes (24 characters)."""
MOST_DISKS = [{"name": f"d{index:02d}-" + stand_in(27, f"disk{index}"), "size_gib": 100}
              for index in range(16)]
"""16 data disks (the schema's maximum) with 31-character names (its longest)."""
OSS_KEY_MAX_BYTES = 1023
"""An OSS object key is at most 1023 bytes (OSS "Object naming conventions")."""
CONTACTS = [{"name": "oncall", "email": "oncall@example.com"}]
"""Contacts turn on the GPU health check (delivered with the node tools)."""
TAGS = {"CostCenter": "cc-1", "Owner": "team-a"}
REGISTRY = {"edition": "enterprise", "namespace": "n" + stand_in(63, "namespace")}
"""The stack's registry with the longest namespace the schema takes (64 characters)."""
STORAGE = {"disks": MOST_DISKS,
           "shared_fs": {"enabled": True, "kind": "extreme", "capacity_gib": 100}}
BAKED_IMAGE = {"name": "gpu-infra-baked"}
"""A custom image, so the `preinstalled` driver route is a shape the validators accept (the
image reaches no user data)."""
VWS_TYPES = ["ecs.vgn7i-vws-m4.xlarge", "ecs.vgn7i-vws-m8.2xlarge", "ecs.vgn7i-vws-m12.3xlarge",
             "ecs.vgn7i-vws-m24.7xlarge"]


def declared(family: str, size: str, count: int, **entry: Any) -> dict[str, dict[str, Any]]:
    """`count` instance types of `family` declared under the longest names a stack may
    declare (`ecs.<family>-<stand_in>.<size>`), each `entry`."""
    length = INSTANCE_TYPE_MAX_CHARS - len(f"ecs.{family}-.{size}")
    names = [f"ecs.{family}-{stand_in(length, f'{family}{index}')}.{size}"
             for index in range(count)]
    return {name: {"family": family, **entry} for name in names}


TRAINING_TYPES = declared("ebmgn7ex", "32xlarge", 1, gpu_model="A800", gpu_count=8,
                          gpu_memory_gib=80, vcpu=128, memory_gib=1024, erdma=True,
                          nvlink=True, nvswitch=True, bare_metal=True, low_latency=True)
"""A training type with everything the nodes set up (eRDMA, NVLink, NVSwitch)."""
INFERENCE_TYPES = declared("gn7i", "12xlarge", ESS_MAX_INSTANCE_TYPES, gpu_model="A10",
                           gpu_count=4, gpu_memory_gib=24, vcpu=48, memory_gib=186)
"""As many inference types as a scaling configuration takes."""
RENDERING_TYPES = declared("vgn7i-vws", "3xlarge", ESS_MAX_INSTANCE_TYPES - len(VWS_TYPES),
                           gpu_model="A10", gpu_count=1, gpu_memory_gib=12, vcpu=12,
                           memory_gib=46, uses=["vgpu", "rendering"])
"""With VWS_TYPES, as many vws types as a scaling configuration takes."""


def _common(layout: str, cidr: str, zones: list[str]) -> dict[str, Any]:
    """What every largest stack has: the longest name, node logs, contacts, the registry,
    the most disks and the shared file system."""
    return {"name": LONGEST_NAME, "layout": layout, "tags": TAGS,
            "network": {"vpc_cidr": cidr, "zones": zones}, "logs": {"enabled": True},
            "monitoring": {"contacts": CONTACTS}, "registry": REGISTRY, "storage": STORAGE}


LARGEST: dict[str, dict[str, Any]] = {
    "training": {**_common("training", "10.1.0.0/16", ["cn-hangzhou-i"]),
                 "instance_types": TRAINING_TYPES,
                 "fleet": {"instance_type": next(iter(TRAINING_TYPES)), "nodes": 2, "erdma": "on",
                           "image": BAKED_IMAGE,
                           "jumbo_frames": True, "capacity": "on_demand",
                           "interruptible": True}},
    "inference": {**_common("inference", "10.2.0.0/16", ["cn-hangzhou-i", "cn-hangzhou-j"]),
                  "security": {"service_ports": [8000], "client_cidrs": ["10.100.0.0/16"]},
                  "instance_types": INFERENCE_TYPES,
                  "fleet": {"instance_types": list(INFERENCE_TYPES), "drain_seconds": 900,
                            "image": BAKED_IMAGE},
                  "serving": {"model": "chat", "readiness_path": "/" + stand_in(79, "ready")}},
    "rendering": {**_common("rendering", "10.3.0.0/16", ["cn-hangzhou-i"]),
                  "instance_types": RENDERING_TYPES,
                  "fleet": {"instance_types": [*VWS_TYPES, *RENDERING_TYPES],
                            "drain_seconds": 900,
                            "image": BAKED_IMAGE,
                            "queue_scaling": {"metric_name": "job_queue_length",
                                              "scale_out_threshold": 1,
                                              "jobs_per_instance": 4},
                            "driver": {"route": "grid", "version": "535.161.07",
                                       "grid_package": f"oss://{LONGEST_NAME}-dev-datasets/"
                                       + stand_in(OSS_KEY_MAX_BYTES, "key"),
                                       "grid_package_sha256": "0" * 64}},
                  "worker": {"image": f"{LONGEST_NAME}-registry-vpc.cn-hangzhou.cr.aliyuncs.com/"
                                      f"{REGISTRY['namespace']}/render:latest",
                             "command": ["blender", "-b"]}},
}
"""Each ECS layout's largest stack: every step and workload its nodes may get, with the
longest names the schema allows (stand_in characters, which compression cannot shrink)."""

Change = tuple[tuple[str, ...], Any]
"""A field path of the stack and the value it takes."""


@dataclass(frozen=True)
class Shape:
    """One stack measured: its layout and its changes from LARGEST (none: the largest
    itself), its worst-case user data in bytes and bootstraps, and why it is refused."""

    layout: str
    changes: tuple[Change, ...]
    size: int | None = None
    """The largest user data of its kinds of nodes (NodePlan.parts)."""
    specs: tuple[BootstrapSpec, ...] = ()
    """Each kind of node's worst-case bootstrap."""
    refused: str | None = None
    """The schema's first problem or the validators' first ERROR line; None: accepted."""

    @property
    def label(self) -> str:
        """`layout` or `layout: path=value, ...`."""
        parts = [f"{'.'.join(path)}={json.dumps(value)[:40]}" for path, value in self.changes]
        return self.layout + (f": {', '.join(parts)}" if parts else "")


def with_changes(stack: dict[str, Any], changes: tuple[Change, ...]) -> dict[str, Any]:
    """A deep copy of `stack` with each path set to its value (missing sections made)."""
    result = copy.deepcopy(stack)
    for path, value in changes:
        section = result
        for key in path[:-1]:
            section = section.setdefault(key, {})
        section[path[-1]] = value
    return result


def apart(first: Change, second: Change) -> bool:
    """Whether neither change sets a field the other's section holds (or the same field)."""
    (one, _), (other, _) = first, second
    return one[:len(other)] != other and other[:len(one)] != one


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model `annotation` holds (alone or in a union), None if none."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return next(filter(None, map(_model_in, typing.get_args(annotation))), None)
    return None


def choices(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[Change]:
    """Every other value the fields of `model` (and of its sections) may take: a Literal's
    values, both booleans, None where a field is optional, [] or {} for a list or mapping."""
    for name, field in model.model_fields.items():
        path, annotation = (*prefix, name), field.annotation
        args = typing.get_args(annotation)
        if annotation is bool:
            yield from ((path, value) for value in (True, False))
        elif typing.get_origin(annotation) is typing.Literal:
            yield from ((path, value) for value in args)
        if type(None) in args:
            yield path, None
        empty = {list: [], dict: {}}
        yield from ((path, empty[origin]) for origin in
                    {typing.get_origin(option) for option in (annotation, *args)} & {list, dict})
        section = _model_in(annotation)
        if section is not None:
            yield from choices(section, path)


def measure(layout: str, changes: tuple[Change, ...] = (), *,
            judge_over: int = 0) -> Shape:
    """The shape of LARGEST[layout] with `changes`: its user data (where the schema takes
    it) and what refuses it. The validators judge it when its user data is over
    `judge_over` bytes (default 0: always); -1: never (the schema alone)."""
    return measure_stack(Shape(layout, changes), with_changes(LARGEST[layout], changes),
                         judge_over=judge_over)


def measure_stack(shape: Shape, stack: dict[str, Any], *, judge_over: int = 0) -> Shape:
    """`shape` measured on `stack` (its cluster section; `judge_over`: as measure's)."""
    try:
        config = parse_cluster_config({"alicloud:region": REGION, "gpu-infra:cluster": stack})
    except ConfigError as error:
        return replace(shape, refused=str(error).splitlines()[0])
    nodes = node_plan(config)
    if nodes is None or not nodes.BOOTSTRAPS:
        return replace(shape, refused="no ECS fleet")
    specs = tuple(worst_case_spec(part) for part in nodes.parts())
    size = max(user_data_size(user_data(spec)) for spec in specs)
    errors = errors_in(judge_stack(config)) if 0 <= judge_over < size else []
    return replace(shape, size=size, specs=specs,
                   refused=errors[0].line() if errors else None)


Axis = tuple[Change, ...]
"""One change, or two that the schema takes only together (spot capacity without jumbo
frames, a NAS kind without the extreme kind's capacity)."""


def axes(layout: str) -> list[Axis]:
    """The choices of LARGEST[layout]'s model that change its nodes' worst-case bootstrap,
    made alone, or (for one the schema refuses alone) together with another such choice or
    with an axis."""
    largest = measure(layout, judge_over=-1)

    def changes_nodes(changes: Axis) -> bool | None:
        """Whether the schema takes `changes` and they change the bootstraps (None: refused)."""
        shape = measure(layout, changes, judge_over=-1)
        return shape.specs != largest.specs if shape.specs else None

    alone: list[Axis] = []
    refused: list[Change] = []
    for change in choices(LAYOUT_MODELS[layout]):
        verdict = changes_nodes((change,))
        if verdict is None:
            refused.append(change)
        elif verdict:
            alone.append((change,))
    partners = [*refused, *(axis[0] for axis in alone)]
    together: list[Axis] = [(first, second) for index, first in enumerate(refused)
                            for second in partners[index + 1:]
                            if apart(first, second) and changes_nodes((first, second))]
    return alone + together


def shapes(layout: str, *, judge_over: int = 0) -> list[Shape]:
    """LARGEST[layout], each of its axes, and each pair of axes that set no field in each
    other's sections (`judge_over`: as measure's)."""
    found = axes(layout)
    pairs = [first + second for first, second in itertools.combinations(found, 2)
             if all(apart(one, other) for one in first for other in second)]
    return [measure(layout, changes, judge_over=judge_over)
            for changes in [(), *found, *pairs]]


def ecs_layouts() -> list[str]:
    """The layouts whose stacks have a fleet (their model has a `fleet` field)."""
    return [name for name, model in LAYOUT_MODELS.items() if "fleet" in model.model_fields]


def shipped_ecs_stacks() -> dict[str, ClusterConfig]:
    """Each shipped stack (stacks/Pulumi.<name>.yaml) whose nodes boot gpu-infra's bootstrap."""
    found = {}
    for path in sorted(STACKS.glob("Pulumi.*.yaml")):
        _, config = load_cluster_config(path)
        nodes = node_plan(config)
        if nodes is not None and nodes.BOOTSTRAPS:
            found[path.name.removeprefix("Pulumi.").removesuffix(".yaml")] = config
    return found


def shipped_size(config: ClusterConfig) -> int:
    """A shipped stack's largest user data (of its kinds of nodes) with the longest values
    the cloud may assign."""
    nodes = node_plan(config)
    assert nodes is not None
    return max(user_data_size(user_data(worst_case_spec(part))) for part in nodes.parts())


def _share(size: int) -> str:
    return f"{size:,} ({100 * size / USER_DATA_MAX_BYTES:.1f}%)"


def report() -> dict[str, Any]:
    """Sizes of the shipped ECS stacks and, per layout, of its largest stack, of the largest
    shape the schema and the validators accept, and of the largest they refuse (each
    refusing finding, the validator's name or `schema`, with the shapes it refuses)."""
    shipped = {name: shipped_size(config) for name, config in shipped_ecs_stacks().items()}
    layouts = {}
    for layout in ecs_layouts():
        measured = shapes(layout)
        accepted = [shape for shape in measured if shape.refused is None]
        refused: dict[str, list[Shape]] = {}
        for shape in measured:
            if shape.refused is not None:
                reason = shape.refused.split(":")[0] if shape.size else "schema"
                refused.setdefault(reason, []).append(shape)
        worst = max(accepted, key=lambda shape: shape.size or 0)
        layouts[layout] = {
            "shapes": len(measured), "largest": measured[0].size,
            "worst_accepted": {"shape": worst.label, "size": worst.size},
            "refused": {reason: {"shapes": len(found),
                                 "largest": max(shape.size or 0 for shape in found)}
                        for reason, found in refused.items()}}
    return {"limit": USER_DATA_MAX_BYTES, "room": ROOM, "shipped": shipped, "layouts": layouts}


def markdown(results: dict[str, Any]) -> str:
    """The report as a table."""
    lines = [f"User data, worst case (bytes, share of the {results['limit']:,}-byte limit; "
             f"room {results['room']:,})", "", "| stack or shape | user data | note |",
             "|---|---:|---|"]
    lines += [f"| {name} | {_share(size)} | shipped |"
              for name, size in results["shipped"].items()]
    for layout, found in results["layouts"].items():
        worst = found["worst_accepted"]
        lines += [f"| largest {layout} | {_share(found['largest'])} | "
                  f"{found['shapes']} shapes measured |",
                  f"| largest accepted {layout} | {_share(worst['size'])} | "
                  f"{worst['shape'].replace('|', '/')} |"]
        lines += [f"| refused {layout} | "
                  f"{_share(refused['largest']) if refused['largest'] else '-'} | "
                  f"{refused['shapes']} shapes, by {reason} |"
                  for reason, refused in found["refused"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Print the report (markdown, or JSON with --json)."""
    parser = argparse.ArgumentParser(prog="python -m bench.user_data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="JSON instead of a table")
    as_json = parser.parse_args(argv).json
    results = report()
    print(json.dumps(results, indent=2) if as_json else markdown(results).rstrip("\n"))


if __name__ == "__main__":
    main()
