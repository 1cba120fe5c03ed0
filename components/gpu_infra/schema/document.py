"""A YAML document read the way `pulumi up` reads a stack file, within fixed limits.

Pulumi reads stack files with a YAML 1.2 parser (go-yaml v3): `yes`, `no`, `on`, `off` are
strings, duplicate keys are refused, and an unquoted date stays a string. ruamel.yaml's
YAML 1.2 loader reads them the same way, and it is the one parser used for reading and for
writing (clone) stack files.

The text is parsed once: each parser event is checked against the limits below as the
composer takes it, and values are built only once every event has passed, so a hostile file
fails fast with one line per problem: too large, nested too deep, aliases that expand too far
(a "billion laughs"), explicit tags for non-JSON types (`!!binary`, `!!set`, `!!timestamp`,
...) or duplicate keys. Everything that passes is a JSON value: what Pulumi can
hand the program through `pulumi.Config.get_object`.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    StreamEndEvent,
)
from ruamel.yaml.parser import Parser
from ruamel.yaml.reader import ReaderError

from gpu_infra.schema.problems import ConfigError, shorten

MAX_DOCUMENT_BYTES = 256 * 1024
"""Largest stack file read (256 KiB); the shipped stacks are about 2 kB."""
MAX_DEPTH = 32
"""Deepest nesting of mappings and lists; the stack schema itself is at most 7 deep."""
MAX_NODES = 20_000
"""Most values a document may hold once its aliases are expanded."""
PARSED_KEPT = 64
"""Documents load_plain keeps the values of (at most MAX_DOCUMENT_BYTES each)."""
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


class _Limits:
    """The checks of one document, made on each event as the parser hands it out (to the
    composer, which builds nodes, never values): the first problem that makes reading on
    pointless raises ConfigError at once; the others are collected and raised when the stream
    ends, before any value is constructed. Paths are prefixed with `root`."""

    def __init__(self, source: str, root: str) -> None:
        self.source = source
        self.root = root
        self.problems: list[str] = []
        self.opened: list[_Open] = []
        self.anchors: dict[str, int] = {}
        self.total = 0
        self.documents = 0

    def problem(self, line: int, path: str, message: str) -> None:
        self.problems.append(f"{self.source}:{line}: {path or '(document)'}: {message}")

    def stop(self) -> ConfigError:
        return ConfigError(self.source, self.problems)

    def see(self, event: Event) -> None:
        """Check one event; ConfigError when reading must stop or the stream ended with
        problems."""
        if isinstance(event, StreamEndEvent):
            if self.problems:
                raise self.stop()
            return
        if isinstance(event, DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                self.problem(event.start_mark.line + 1, "", "a second YAML document; a stack "
                             "file holds one")
                raise self.stop()
            return
        opened = self.opened
        if isinstance(event, CollectionEndEvent):
            done = opened.pop()
            if done.anchor:
                self.anchors[done.anchor] = done.nodes
            if opened:
                opened[-1].nodes += done.nodes
            else:
                self.total += done.nodes
            return
        if not isinstance(event, NodeEvent):
            return
        line = event.start_mark.line + 1
        parent = opened[-1] if opened else None
        path = self.root
        if parent is not None and parent.is_mapping:
            if parent.next_is_key:
                parent.next_is_key = False
                if not isinstance(event, ScalarEvent):
                    self.problem(line, parent.path, "a mapping key must be a plain string")
                    raise self.stop()
                key = event.value
                if key in parent.keys:
                    self.problem(line, _child_path(parent.path, key),
                                 f"duplicate key (first at line {parent.keys[key]}); "
                                 "Pulumi refuses duplicate keys")
                parent.keys[key] = line
                parent.key = key
                parent.nodes += 1
                return
            parent.next_is_key = True
            path = _child_path(parent.path, parent.key or "")
        elif parent is not None:
            path = _child_path(parent.path, parent.items)
            parent.items += 1
        tag = getattr(event, "tag", None)
        if tag not in (None, "!") and tag not in JSON_TAGS:
            self.problem(line, path, f"tag {tag.replace('tag:yaml.org,2002:', '!!')} is not "
                         "allowed; a stack file holds strings, numbers, booleans, null, "
                         "mappings and lists only")
        if isinstance(event, AliasEvent):
            size = self.anchors.get(event.anchor)
            if size is None:
                self.problem(line, path, f"alias *{event.anchor} names no anchor before it")
                raise self.stop()
        elif isinstance(event, CollectionStartEvent):
            if len(opened) >= MAX_DEPTH:
                self.problem(line, path, f"nested more than {MAX_DEPTH} levels deep")
                raise self.stop()
            opened.append(_Open(path, isinstance(event, MappingStartEvent), event.anchor, line))
            return
        else:
            size = 1
            if event.anchor:
                self.anchors[event.anchor] = 1
        if parent is not None:
            parent.nodes += size
        else:
            self.total += size
        if self.total + sum(o.nodes for o in opened) > MAX_NODES:
            self.problem(line, path, f"more than {MAX_NODES} values, counting what aliases "
                         "expand to; a stack file needs a few hundred")
            raise self.stop()


def _checked_load(loader: YAML, text: str, source: str, root: str = "") -> Any:
    """`loader.load(text)` in one pass over the text: the composer takes each event from the
    parser only after _Limits has checked it, and the values are constructed only once every
    event has passed. ConfigError with `source:line: path: problem` lines."""
    limits = _Limits(source, root)
    deep_line = _flow_too_deep(text)
    if deep_line:
        limits.problem(deep_line, root, f"brackets nested more than {MAX_DEPTH} levels deep")
        raise limits.stop()
    parser = loader.parser  # ruamel makes it on first use and keeps it for every load
    if not isinstance(parser, Parser):  # the C parser would hand the composer no events
        raise TypeError(f"{type(parser).__name__}: the checks need a pure-Python parser")
    unchecked = parser.get_event

    def get_event() -> Event:
        event: Event = unchecked()
        limits.see(event)
        return event

    parser.get_event = get_event  # type: ignore[method-assign]  # this parser instance only
    try:
        return loader.load(text)
    except MarkedYAMLError as error:
        raise ConfigError(source, [_syntax_problem(source, error)]) from None
    except ReaderError as error:
        raise ConfigError(source, [_character_problem(source, text, error)]) from None
    except YAMLError as error:
        raise ConfigError(source, [f"{source}: malformed YAML: {shorten(str(error))}"]) from None
    finally:
        del parser.get_event


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


def _character_problem(source: str, text: str, error: ReaderError) -> str:
    """`source:line:column: malformed YAML: ...` for a character YAML does not allow (a NUL,
    a control character), where ruamel names a position in its own two-line message."""
    position = min(int(error.position), len(text))
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    character = error.character
    code = ord(character) if isinstance(character, (bytes, str)) else int(character)
    return (f"{source}:{line}:{column}: malformed YAML: character U+{code:04X} is not "
            "allowed (YAML takes printable characters only)")


def decode(data: bytes, source: str, kind: str = "stack file") -> str:
    """The bytes of a `kind` as UTF-8 text, within MAX_DOCUMENT_BYTES; ConfigError if not."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ConfigError(source, [f"{source}: larger than {MAX_DOCUMENT_BYTES} bytes, the most "
                                   f"a {kind} may have"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(source, [f"{source}: byte {error.start} is not UTF-8 text; {kind}s "
                                   "are UTF-8"]) from None


def read_text(path: Path, kind: str = "stack file") -> str:
    """The text of the `kind` at `path` (decode's limits). ConfigError, one line naming the
    file, if it is not a regular file (a FIFO is never opened: it would wait for a writer),
    cannot be read, or decode refuses it."""
    source = str(path)
    if not path.is_file():
        raise ConfigError(source, [f"{source}: not a regular file"])
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as error:
        raise ConfigError(source, [f"{source}: cannot read: {error.strerror}"]) from None
    return decode(data, source, kind)


def load_plain(text: str, source: str) -> Any:
    """The document as plain JSON values (dict, list, str, int, float, bool, None), within the
    limits; ConfigError with one line per problem. A text read before in this process is not
    parsed again (a process that reads the same stack file many times, like the test suite,
    pays once): each caller gets a copy of its own to change."""
    with _PARSED_LOCK:
        value = _PARSED.get(text, _UNREAD)
    if value is _UNREAD:
        value = _plain_values(text, source)
        with _PARSED_LOCK:
            if len(_PARSED) >= PARSED_KEPT:
                del _PARSED[next(iter(_PARSED))]  # the one read first
            _PARSED[text] = value
    return copy.deepcopy(value)


_PARSED: dict[str, Any] = {}
"""The values of the last PARSED_KEPT texts load_plain read, by text (never handed out)."""
_PARSED_LOCK = threading.Lock()
_UNREAD = object()


def _plain_values(text: str, source: str) -> Any:
    document = YAML(typ="safe", pure=True)
    document.Constructor = _PulumiConstructor
    value = _checked_load(document, text, source)
    problems = list(_non_json(value, ""))
    if problems:
        raise ConfigError(source, [f"{source}: {line}" for line in problems])
    return value


def load_round_trip(text: str, source: str, loader: YAML, root: str = "") -> Any:
    """The document with its comments and layout (ruamel round-trip `loader`), within the
    same limits as load_plain (`root` prefixes the paths in problems)."""
    return _checked_load(loader, text, source, root)


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
