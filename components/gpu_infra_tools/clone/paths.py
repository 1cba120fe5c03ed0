"""Config paths in Pulumi's `--path` syntax (`a.b[0]["key.with.dots"]`), read and written on
a YAML document, and the `--set PATH=VALUE` overrides of `gpu-infra clone`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from gpu_infra.schema import CLUSTER_KEY, ConfigError
from gpu_infra.schema.document import load_round_trip
from gpu_infra.schema.problems import shorten

Part = str | int
"""One step of a path: a mapping key or a list index."""

SETTABLE_NAMESPACES = ("alicloud",)
"""Config namespaces, besides gpu-infra:cluster, whose keys `--set` may write."""

_PLAIN_KEY = re.compile(r"[^.\[\]\"]+")
_INDEX = re.compile(r"\[(\d+)\]")
_QUOTED = re.compile(r"\[\"([^\"]+)\"\]")


class PathError(ValueError):
    """A path or override that cannot be used; the message says why."""


@dataclass(frozen=True)
class ConfigPath:
    """A config key (`gpu-infra:cluster`, `alicloud:region`) and a path below it."""

    key: str
    parts: tuple[Part, ...] = ()

    def pulumi(self) -> str:
        """The path as `pulumi config set --path` spells it, e.g.
        `gpu-infra:cluster.monitoring.webhook` or `gpu-infra:cluster.tags["a.b"]`."""
        text = self.key
        for part in self.parts:
            if isinstance(part, int):
                text += f"[{part}]"
            elif _PLAIN_KEY.fullmatch(part):
                text += f".{part}"
            else:
                text += f'["{part}"]'
        return text

    def set_secret_command(self, stack_name: str) -> str:
        """The shell command that stores a secret at this path in the stack `stack_name`."""
        path = self.pulumi()
        quoted = f"'{path}'" if "'" not in path else shlex.quote(path)
        flags = "--path --secret" if self.parts else "--secret"
        return f"pulumi config set {flags} {quoted} VALUE -s {shlex.quote(stack_name)}"


def parse_path(text: str) -> tuple[Part, ...]:
    """`network.zones[0]` -> ("network", "zones", 0); `tags["a.b"]` -> ("tags", "a.b")."""
    parts: list[Part] = []
    rest = text
    while rest:
        if parts and not rest.startswith("["):
            if not rest.startswith("."):
                raise PathError(f"bad path {text!r}: expected '.' or '[' before {rest!r}")
            rest = rest[1:]
        if match := _INDEX.match(rest):
            parts.append(int(match.group(1)))
        elif match := _QUOTED.match(rest):
            parts.append(match.group(1))
        elif match := _PLAIN_KEY.match(rest):
            parts.append(match.group(0))
        else:
            raise PathError(f"bad path {text!r}: cannot read {rest!r}")
        rest = rest[match.end():]
    if not parts or isinstance(parts[0], int):
        raise PathError(f"bad path {text!r}: it must start with a key")
    return tuple(parts)


def config_path(text: str) -> ConfigPath:
    """A `--set` path: `fleet.nodes` (under gpu-infra:cluster), `gpu-infra:cluster.fleet.nodes`
    or `alicloud:region` (a key with a namespace)."""
    parts = parse_path(text)
    head = parts[0]
    if isinstance(head, str) and ":" in head:
        if head != CLUSTER_KEY and head.split(":", 1)[0] not in SETTABLE_NAMESPACES:
            raise PathError(f"{head}: only {CLUSTER_KEY} paths and "
                            f"{', '.join(ns + ':*' for ns in SETTABLE_NAMESPACES)} keys "
                            "can be set")
        return ConfigPath(head, parts[1:])
    return ConfigPath(CLUSTER_KEY, parts)


@dataclass(frozen=True)
class Override:
    """One `--set PATH=VALUE`; a null VALUE (`null` or `~`) removes the key; an empty VALUE
    is refused (it would remove the key by accident)."""

    text: str
    path: ConfigPath
    value: Any


def parse_override(text: str) -> Override:
    """Parse `PATH=VALUE`; VALUE is a YAML scalar or flow collection (`[a, b]`, `{k: v}`)."""
    path_text, sep, value_text = text.partition("=")
    shown = shorten(text, 80)
    if not sep or not path_text:
        raise PathError(f"--set {shown}: expected PATH=VALUE, e.g. fleet.nodes=16")
    if not value_text.strip():
        raise PathError(f"--set {shown}: no VALUE; write null to remove the key, '' for an "
                        "empty string")
    try:
        path = config_path(path_text.strip())
        value = load_round_trip(value_text, "VALUE", YAML(typ="rt"),
                                root=shorten(path_text.strip(), 80))
    except PathError as error:
        raise PathError(f"--set {shown}: {error}") from None
    except ConfigError as error:
        raise PathError(f"--set {shown}: {'; '.join(error.problems)}") from None
    except YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise PathError(f"--set {shown}: value is not YAML: {problem}") from None
    return Override(text, path, value)


def apply(config: CommentedMap, path: ConfigPath, value: Any) -> None:
    """Set `value` at `path` in a stack file's `config:` mapping, creating missing mappings;
    `None` removes the key. Raises PathError when the path runs through a non-container."""
    steps: tuple[Part, ...] = (path.key, *path.parts)
    node: Any = config
    for depth, part in enumerate(steps):
        last = depth == len(steps) - 1
        where = ConfigPath(path.key, steps[1:depth]).pulumi() if depth else "config"
        if isinstance(part, int):
            if not isinstance(node, list):
                raise PathError(f"{where}: is not a list, cannot index it with [{part}]")
            if part > len(node) or (part == len(node) and not last):
                raise PathError(f"{where}: has {len(node)} item(s); [{part}] is out of range")
        elif not isinstance(node, dict):
            raise PathError(f"{where}: is a {type(node).__name__}, not a mapping; "
                            f"cannot set {part!r} in it")
        if last:
            _put(node, part, value)
            return
        if isinstance(node, dict) and part not in node:
            node[part] = CommentedMap()
        node = node[part]


def _put(node: Any, part: Part, value: Any) -> None:
    if value is not None:
        if isinstance(node, list) and part == len(node):
            node.append(value)
        else:
            node[part] = value
    elif isinstance(node, list):
        if isinstance(part, int) and part < len(node):
            del node[part]
    elif isinstance(part, str) and part in node:
        remove_key(node, part)


def remove_key(mapping: dict[str, Any], key: str) -> None:
    """Delete `key`, keeping the full-line comments that followed its entry: ruamel attaches
    them to the entry above, so they would go with it. They move to the previous entry."""
    keys = list(mapping)
    trailing = _take_trailing(mapping, key)
    del mapping[key]
    position = keys.index(key)
    if trailing and position > 0:
        _add_trailing(mapping, keys[position - 1], trailing)


def _take_trailing(mapping: Any, key: Any) -> str:
    value = mapping[key]
    if isinstance(value, CommentedMap) and value:
        return _take_trailing(value, list(value)[-1])
    slots = getattr(mapping, "ca", None) and mapping.ca.items.get(key)
    token = slots[2] if slots and len(slots) > 2 else None
    if token is None:
        return ""
    _, newline, rest = token.value.partition("\n")
    return rest if newline else ""


def _add_trailing(mapping: Any, key: Any, text: str) -> None:
    value = mapping[key]
    if isinstance(value, CommentedMap) and value:
        _add_trailing(value, list(value)[-1], text)
        return
    slots = mapping.ca.items.setdefault(key, [None, None, None, None])
    if slots[2] is None:
        slots[2] = CommentToken("\n" + text, CommentMark(0), None)
    else:
        slots[2].value = slots[2].value.rstrip("\n") + "\n" + text


def lookup(config: Any, path: ConfigPath) -> Any:
    """The value at `path` in a plain or YAML `config:` mapping, or None."""
    node = config
    for part in (path.key, *path.parts):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node
