"""A YAML document read the way `pulumi up` reads a stack file, within fixed limits.

Pulumi reads stack files with a YAML 1.2 parser (go-yaml v3): `yes`, `no`, `on`, `off` are
strings, duplicate keys are refused, and an unquoted date stays a string. ruamel.yaml's
YAML 1.2 loader reads them the same way, and it is the one parser used for reading and for
writing (clone) stack files.

Before any value is built, one pass over the parser's events checks the limits below, so a
hostile file fails fast with one line per problem: too large, nested too deep, aliases that
expand too far (a "billion laughs"), explicit tags for non-JSON types (`!!binary`, `!!set`,
`!!timestamp`, ...) or duplicate keys. Everything that passes is a JSON value: what Pulumi can
hand the program through `pulumi.Config.get_object`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
)

from gpu_infra.schema.problems import ConfigError, shorten

MAX_DOCUMENT_BYTES = 256 * 1024
"""Largest stack file read (256 KiB); the shipped stacks are about 2 kB."""
MAX_DEPTH = 32
"""Deepest nesting of mappings and lists; the stack schema itself is at most 7 deep."""
MAX_NODES = 20_000
"""Most values a document may hold once its aliases are expanded."""
JSON_TAGS = frozenset(f"tag:yaml.org,2002:{name}"
                      for name in ("str", "int", "float", "bool", "null", "map", "seq"))
"""Explicit tags allowed: those of JSON's types (and `!`, YAML's "plain string")."""


class _PulumiConstructor(SafeConstructor):
    """Safe constructor that keeps an unquoted timestamp a string, as go-yaml v3 does when it
    decodes into an untyped value (which is how Pulumi reads config)."""


_PulumiConstructor.add_constructor("tag:yaml.org,2002:timestamp",
                                   SafeConstructor.construct_yaml_str)


@dataclass
class _Open:
    """A mapping or list whose end event has not come yet."""

    path: str
    is_mapping: bool
    anchor: str | None
    line: int
    nodes: int = 1
    items: int = 0
    next_is_key: bool = True
    key: str | None = None
    keys: dict[str, int] = field(default_factory=dict)
    """Keys seen so far (mappings), with their line."""


def _child_path(parent: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{parent}[{part}]"
    return f"{parent}.{part}" if parent else part


def check_events(text: str, source: str, root: str = "") -> None:
    """Check the limits and tags on the parser's events, building nothing; raise ConfigError
    with `source:line: path: problem` lines. `root` prefixes every path."""
    problems: list[str] = []
    opened: list[_Open] = []
    anchors: dict[str, int] = {}
    total = 0
    documents = 0

    def problem(line: int, path: str, message: str) -> None:
        problems.append(f"{source}:{line}: {path or '(document)'}: {message}")

    deep_line = _flow_too_deep(text)
    if deep_line:
        problem(deep_line, root, f"brackets nested more than {MAX_DEPTH} levels deep")
        raise ConfigError(source, problems)
    try:
        for event in YAML(typ="safe", pure=True).parse(text):
            if isinstance(event, DocumentStartEvent):
                documents += 1
                if documents > 1:
                    problem(event.start_mark.line + 1, "", "a second YAML document; a stack "
                            "file holds one")
                    break
            if isinstance(event, CollectionEndEvent):
                done = opened.pop()
                if done.anchor:
                    anchors[done.anchor] = done.nodes
                if opened:
                    opened[-1].nodes += done.nodes
                else:
                    total += done.nodes
                continue
            if not isinstance(event, NodeEvent):
                continue
            line = event.start_mark.line + 1
            parent = opened[-1] if opened else None
            path = root
            if parent is not None and parent.is_mapping:
                if parent.next_is_key:
                    parent.next_is_key = False
                    if not isinstance(event, ScalarEvent):
                        problem(line, parent.path, "a mapping key must be a plain string")
                        break
                    key = event.value
                    if key in parent.keys:
                        problem(line, _child_path(parent.path, key),
                                f"duplicate key (first at line {parent.keys[key]}); "
                                "Pulumi refuses duplicate keys")
                    parent.keys[key] = line
                    parent.key = key
                    parent.nodes += 1
                    continue
                parent.next_is_key = True
                path = _child_path(parent.path, parent.key or "")
            elif parent is not None:
                path = _child_path(parent.path, parent.items)
                parent.items += 1
            tag = getattr(event, "tag", None)
            if tag not in (None, "!") and tag not in JSON_TAGS:
                problem(line, path, f"tag {tag.replace('tag:yaml.org,2002:', '!!')} is not "
                        "allowed; a stack file holds strings, numbers, booleans, null, "
                        "mappings and lists only")
            if isinstance(event, AliasEvent):
                size = anchors.get(event.anchor)
                if size is None:
                    problem(line, path, f"alias *{event.anchor} names no anchor before it")
                    break
            elif isinstance(event, CollectionStartEvent):
                if len(opened) >= MAX_DEPTH:
                    problem(line, path, f"nested more than {MAX_DEPTH} levels deep")
                    break
                opened.append(_Open(path, isinstance(event, MappingStartEvent),
                                    event.anchor, line))
                continue
            else:
                size = 1
                if event.anchor:
                    anchors[event.anchor] = 1
            if parent is not None:
                parent.nodes += size
            else:
                total += size
            if total + sum(o.nodes for o in opened) > MAX_NODES:
                problem(line, path, f"more than {MAX_NODES} values, counting what aliases "
                        "expand to; a stack file needs a few hundred")
                break
    except MarkedYAMLError as error:
        raise ConfigError(source, [_syntax_problem(source, error)]) from None
    except YAMLError as error:
        raise ConfigError(source, [f"{source}: malformed YAML: {shorten(str(error))}"]) from None
    if problems:
        raise ConfigError(source, problems)


_BRACKET = re.compile(r"[\[\]{}\n]")


def _flow_too_deep(text: str) -> int | None:
    """The line where `[` and `{` (counted anywhere, minus closing ones) first nest deeper
    than MAX_DEPTH, else None. The parser's scanner slows down with the square of the flow
    nesting (600 levels: 2 s), so this cheap count runs first; it may over-count brackets
    inside strings and comments, never under-count real ones."""
    depth, line = 0, 1
    for match in _BRACKET.finditer(text):
        char = match.group()
        if char == "\n":
            line += 1
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        else:
            depth = max(depth - 1, 0)
    return None


def _syntax_problem(source: str, error: MarkedYAMLError) -> str:
    mark = error.problem_mark or error.context_mark
    where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
    what = error.problem or error.context or "cannot parse"
    return f"{source}{where}: malformed YAML: {what}"


def decode(data: bytes, source: str) -> str:
    """The bytes of a file as UTF-8 text, within MAX_DOCUMENT_BYTES; ConfigError if not."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ConfigError(source, [f"{source}: larger than {MAX_DOCUMENT_BYTES} bytes, the most "
                                   "a stack file may have"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(source, [f"{source}: byte {error.start} is not UTF-8 text; stack "
                                   "files are UTF-8"]) from None


def load_plain(text: str, source: str) -> Any:
    """The document as plain JSON values (dict, list, str, int, float, bool, None), after
    check_events; ConfigError with one line per problem."""
    check_events(text, source)
    try:
        document = YAML(typ="safe", pure=True)
        document.Constructor = _PulumiConstructor
        value = document.load(text)
    except MarkedYAMLError as error:
        raise ConfigError(source, [_syntax_problem(source, error)]) from None
    problems = list(_non_json(value, ""))
    if problems:
        raise ConfigError(source, [f"{source}: {line}" for line in problems])
    return value


def load_round_trip(text: str, source: str, loader: YAML, root: str = "") -> Any:
    """The document with its comments and layout (ruamel round-trip `loader`), after the
    same checks as load_plain (`root` prefixes the paths in problems)."""
    check_events(text, source, root)
    try:
        return loader.load(text)
    except MarkedYAMLError as error:
        raise ConfigError(source, [_syntax_problem(source, error)]) from None


def _non_json(value: Any, path: str) -> Iterator[str]:
    """`path: problem` for each value JSON cannot hold (a non-string key, a value of another
    type than JSON's). Non-finite numbers are left to the schema, which refuses them."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield (f"{_child_path(path, str(key))}: the key {shorten(repr(key), 40)} is not "
                       "a string; keys must be strings (quote it)")
            else:
                yield from _non_json(item, _child_path(path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_json(item, _child_path(path, index))
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        yield (f"{path or '(document)'}: a {type(value).__name__} is not a JSON value; "
               "use a string, number, boolean, null, mapping or list")
