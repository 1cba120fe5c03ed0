"""Edits no one wrote by hand: every scalar field (and list of scalars) a shipped stack sets,
moved to another value the schema and the validators accept. The values tried, in order:
the other values of the field's enum (schema/gpu-infra-stack.schema.json), the values other
shipped stacks give the same field, then a nudge of the value itself (a boolean flipped, a
number up or down, a CIDR, version, time or zone moved, a list shortened, reversed or
extended, a name extended).
The first that plans is the edit; a field with none is skipped (and counted)."""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpu_infra_facts.ack import KUBERNETES_MINORS

from .conftest import PROJECT_DIR, STACKS_DIR

SCHEMA = PROJECT_DIR / "schema" / "gpu-infra-stack.schema.json"
Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class GeneratedEdit:
    """One field of one shipped stack moved to another value."""

    stack: str
    path: Path_
    before: Any
    after: Any

    @property
    def field(self) -> str:
        """`fleet.nodes`, `storage.disks[0].size_gib`."""
        return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)[1:]

    def apply(self, cluster: dict[str, Any]) -> dict[str, Any]:
        """A copy of `cluster` with the edit made."""
        edited = copy.deepcopy(cluster)
        node: Any = edited
        for key in self.path[:-1]:
            node = node[key]
        node[self.path[-1]] = copy.deepcopy(self.after)
        return edited


def clusters() -> dict[str, dict[str, Any]]:
    """Shipped stack name -> its `gpu-infra:cluster`."""
    return {path.name.removeprefix("Pulumi.").removesuffix(".yaml"):
            yaml.safe_load(path.read_text(encoding="utf-8"))["config"]["gpu-infra:cluster"]
            for path in sorted(STACKS_DIR.glob("Pulumi.*.yaml"))}


def fields(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """(path, value) of every scalar and list of scalars under `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from fields(item, (*path, key))
    elif isinstance(value, list) and any(isinstance(i, dict | list) for i in value):
        for index, item in enumerate(value):
            yield from fields(item, (*path, index))
    else:
        yield path, value


def _enums(schema: dict[str, Any], node: Any, keys: list[str], found: set[str]) -> None:
    """Collect the enum values at `keys` below schema `node`, through refs and combinators."""
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        _enums(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[1]], keys, found)
    for combinator in ("allOf", "anyOf", "oneOf"):
        for option in node.get(combinator, ()):
            _enums(schema, option, keys, found)
    for branch in ("then", "else", "items", "additionalProperties"):
        if branch in node and (branch != "items" or not keys):
            _enums(schema, node[branch], keys, found)
    if not keys:
        found.update(json.dumps(v) for v in node.get("enum", ()))
        return
    if "properties" in node and keys[0] in node["properties"]:
        _enums(schema, node["properties"][keys[0]], keys[1:], found)
    if "items" in node and keys:
        _enums(schema, node["items"], keys, found)


def enum_values(path: Path_) -> list[Any]:
    """The enum values the schema allows at a cluster field (list positions skipped)."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cluster = schema["properties"]["config"]["properties"]["gpu-infra:cluster"]
    found: set[str] = set()
    _enums(schema, cluster, [str(p) for p in path if not isinstance(p, int)], found)
    return [json.loads(v) for v in sorted(found)]


def _nudges(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value * 2, value - 1, max(value // 2, 0)]
    if isinstance(value, float):
        return [value * 1.5, value + 1, value / 2]
    if isinstance(value, list):
        longer = [[*value, extra] for extra in _nudges(value[-1])] if value else []
        return ([value[:-1], value[::-1]] if len(value) > 1 else []) + longer + [[]]
    if not isinstance(value, str):
        return []
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+/\d+", value):
        network = ipaddress.IPv4Network(value, strict=False)
        return [str(ipaddress.IPv4Network((int(network.network_address)
                                           + network.num_addresses, network.prefixlen)))]
    if re.fullmatch(r"1\.\d+\.\d+-aliyun\.\d+", value):
        return [f"1.{minor}.1-aliyun.1" for minor in KUBERNETES_MINORS]
    if re.fullmatch(r"\d\d:\d\d", value):
        return [f"{(int(value[:2]) + 2) % 24:02d}{value[2:]}"]
    if re.fullmatch(r"[a-z]{2}-[a-z0-9-]+-[a-y]", value):  # a zone: the next one
        return [value[:-1] + chr(ord(value[-1]) + 1)]
    if "@" in value:
        return [value.replace("@", "-2@", 1)]
    return [f"{value}x", f"{value}-2"]


def candidates(path: Path_, value: Any, seen: dict[Path_, list[Any]]) -> list[Any]:
    """Other values to try for the field at `path` now holding `value`."""
    options = [*enum_values(path), *seen.get(_shape(path), ()), *_nudges(value)]
    unique: list[Any] = []
    for option in options:
        if option != value and type(option) is type(value) and option not in unique:
            unique.append(option)
    return unique


def _shape(path: Path_) -> Path_:
    return tuple("[]" if isinstance(p, int) else p for p in path)


def values_by_field(stacks: dict[str, dict[str, Any]]) -> dict[Path_, list[Any]]:
    """Field (list positions as `[]`) -> the values the shipped stacks give it."""
    seen: dict[Path_, list[Any]] = {}
    for cluster in stacks.values():
        for path, value in fields(cluster):
            seen.setdefault(_shape(path), []).append(value)
    return seen


def write_stack(stack: str, cluster: dict[str, Any], directory: Path) -> Path:
    """The shipped stack file of `stack` with `cluster` in place of its own, in `directory`
    beside copies of the other shipped stacks."""
    directory.mkdir(parents=True, exist_ok=True)
    for neighbour in STACKS_DIR.glob("Pulumi.*.yaml"):  # what stack references read
        (directory / neighbour.name).write_bytes(neighbour.read_bytes())
    path = directory / f"Pulumi.{stack}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["config"]["gpu-infra:cluster"] = cluster
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
