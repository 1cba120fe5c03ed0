"""Policy documents (RAM policies, trust policies, OSS bucket policies) read safely.

A document is judged only once it is read: deeper than MAX_DEPTH levels, longer than
MAX_LENGTH characters, not JSON or not shaped like a policy, it is a problem to report (the
`policy-documents-readable` rule), never a crash. Depth is measured by an iterative scan
before `json.loads` runs, so a 3 kB document nested 1500 levels deep cannot reach the
parser's recursion limit.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_infra_policies.base import as_list, contains_unknown, is_unknown

MAX_DEPTH = 32
"""Deepest nesting read; real policies nest 4-6 levels (Statement, Condition, operator)."""
MAX_LENGTH = 65536
"""Longest document read, in characters (RAM policies hold at most 6144, bucket policies
16 KiB)."""


class UnreadableDocument(ValueError):
    """A document the rules cannot judge; the message says why."""


def nesting_depth(text: str) -> int:
    """Deepest bracket nesting of JSON text, outside strings (iterative: any input)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _object_depth(value: Any) -> int:
    """Deepest nesting of an already parsed value (iterative)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = list(item.values())
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


@dataclass(frozen=True)
class Statement:
    """One statement, its elements as lists of strings (Condition kept as given)."""

    effect: str
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    not_resources: tuple[str, ...] = ()
    principal: Any = None
    condition: Any = None

    @property
    def allows(self) -> bool:
        """True for an Allow statement (the effect is case-insensitive)."""
        return self.effect.lower() == "allow"

    def grants(self, action: str) -> bool:
        """True if the statement's actions cover `action` (patterns, case-insensitive)."""
        if self.not_actions:
            return not any(matches(p, action) for p in self.not_actions)
        return any(matches(p, action) for p in self.actions)


def matches(pattern: str, value: str) -> bool:
    """RAM wildcard match (`*`, `?`), case-insensitive."""
    return fnmatch.fnmatchcase(value.lower(), pattern.lower())


def strings(value: Any) -> tuple[str, ...]:
    """A string-or-list element as a tuple of strings."""
    return (value,) if isinstance(value, str) else tuple(
        v for v in as_list(value) if isinstance(v, str))


def read_document(value: Any) -> list[Statement] | None:
    """The statements of a document given as JSON text or an object; None when there is
    nothing to judge (absent or unknown). Raises UnreadableDocument."""
    if value is None or value == "" or is_unknown(value):
        return None
    if isinstance(value, str):
        if len(value) > MAX_LENGTH:
            raise UnreadableDocument(f"is {len(value)} characters long (more than "
                                     f"{MAX_LENGTH})")
        depth = nesting_depth(value)
        if depth > MAX_DEPTH:
            raise UnreadableDocument(f"nests {depth} levels deep (more than {MAX_DEPTH})")
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as error:
            raise UnreadableDocument(f"is not valid JSON ({error})") from None
    elif _object_depth(value) > MAX_DEPTH:
        raise UnreadableDocument(f"nests more than {MAX_DEPTH} levels deep")
    if contains_unknown(value):
        return None
    if not isinstance(value, Mapping):
        raise UnreadableDocument("is not a JSON object")
    keyed = {str(k).lower(): v for k, v in value.items()}
    raw = keyed.get("statement")
    items = [raw] if isinstance(raw, Mapping) else raw
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, Mapping) for i in items):
        raise UnreadableDocument("has no Statement list of objects")
    return [statement(item) for item in items]


def statement(item: Mapping[str, Any]) -> Statement:
    """One statement from its JSON object (element names case-insensitive)."""
    keyed = {str(k).lower(): v for k, v in item.items()}
    effect = keyed.get("effect")
    return Statement(effect if isinstance(effect, str) else "",
                     strings(keyed.get("action")), strings(keyed.get("notaction")),
                     strings(keyed.get("resource")), strings(keyed.get("notresource")),
                     keyed.get("principal"), keyed.get("condition"))
