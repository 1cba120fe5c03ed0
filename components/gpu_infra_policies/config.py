"""The policy config file: per-rule enforcement level and thresholds.

The CrossGuard format, so one file serves `pulumi preview --policy-pack policies
--policy-pack-config FILE` and `gpu-infra plan --policy-config FILE`:

    {"all": "advisory",
     "no-world-ingress": {"enforcementLevel": "mandatory", "publicListenerPorts": [443]},
     "required-tags": {"requiredTags": ["CostCenter", "Owner"]},
     "monthly-budget": "disabled"}

`all` sets the level of every rule (a rule's own entry wins). Levels: advisory, mandatory,
disabled. Unknown rules, levels and thresholds, and thresholds of the wrong type, are errors,
one line per problem.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpu_infra_policies.base import ENFORCEMENT_LEVELS
from gpu_infra_policies.rules import RULES_BY_NAME, RuleSettings, default_settings

ALL = "all"
LEVEL_KEY = "enforcementLevel"
MAX_CONFIG_BYTES = 1 << 20
"""Largest policy config file read (1 MiB)."""
MAX_DEPTH = 16
"""Deepest nesting of objects and arrays; a policy config needs 3 levels."""


class PolicyConfigError(Exception):
    """A bad policy config file; `problems` holds one line per problem."""

    def __init__(self, source: str, problems: list[str]):
        super().__init__(f"{source}: " + "; ".join(problems))
        self.source = source
        self.problems = problems


def _type_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """What is wrong with `value` under a (small subset of) JSON schema, or None."""
    kind = schema.get("type")
    checks = {"number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
              and math.isfinite(v),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "array": lambda v: isinstance(v, list)}
    if kind in checks and not checks[kind](value):
        article = "an" if kind[0] in "aeiou" else "a"
        return f"must be {article} {kind}, got {json.dumps(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(str, schema['enum']))}, got {json.dumps(value)}"
    if "minimum" in schema and value < schema["minimum"]:
        return f"must be at least {schema['minimum']}, got {value}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"must be at most {schema['maximum']}, got {value}"
    if kind == "array" and "items" in schema:
        for index, item in enumerate(value):
            problem = _type_problem(item, schema["items"])
            if problem:
                return f"item {index} {problem}"
    return None


def _level_problem(path: str, level: Any) -> str | None:
    if level not in ENFORCEMENT_LEVELS:
        return (f"{path}: unknown enforcement level {json.dumps(level)}; allowed: "
                f"{', '.join(ENFORCEMENT_LEVELS)}")
    return None


def parse_policy_config(data: Any, source: str = "policy config") -> dict[str, RuleSettings]:
    """Settings of every rule: defaults, then `all`, then each rule's own entry.

    Raises PolicyConfigError listing every problem.
    """
    if not isinstance(data, Mapping):
        raise PolicyConfigError(source, ["the file must hold a JSON object of rule names"])
    settings = default_settings()
    problems: list[str] = []
    if ALL in data:
        problem = _level_problem(ALL, data[ALL])
        if problem:
            problems.append(problem)
        else:
            settings = {name: RuleSettings(data[ALL], s.thresholds, level_configured=True)
                        for name, s in settings.items()}
    for name, entry in data.items():
        if name == ALL:
            continue
        rule = RULES_BY_NAME.get(name)
        if rule is None:
            problems.append(f"{name}: unknown rule; known: {', '.join(RULES_BY_NAME)}")
            continue
        if isinstance(entry, str):
            entry = {LEVEL_KEY: entry}
        if not isinstance(entry, Mapping):
            problems.append(f"{name}: must be an enforcement level or an object")
            continue
        level = entry.get(LEVEL_KEY, settings[name].level)
        thresholds = dict(settings[name].thresholds)
        problem = _level_problem(f"{name}.{LEVEL_KEY}", level)
        if problem:
            problems.append(problem)
        for key, value in entry.items():
            if key == LEVEL_KEY:
                continue
            if key not in rule.schema:
                allowed = ", ".join(rule.schema) or "none"
                problems.append(f"{name}.{key}: unknown threshold; allowed: {allowed}")
                continue
            problem = _type_problem(value, rule.schema[key])
            if problem:
                problems.append(f"{name}.{key}: {problem}")
            thresholds[key] = value
        settings[name] = RuleSettings(level, thresholds, level_configured=(
            LEVEL_KEY in entry or settings[name].level_configured))
    if problems:
        raise PolicyConfigError(source, problems)
    return settings


def load_policy_config(path: Path) -> dict[str, RuleSettings]:
    """Read and validate a policy config file (PolicyConfigError if unreadable or bad): UTF-8
    JSON of at most MAX_CONFIG_BYTES, nested at most MAX_DEPTH levels, no duplicate keys, no
    NaN or Infinity."""
    source = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise PolicyConfigError(source, [f"cannot read: {error.strerror}"]) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise PolicyConfigError(source, [f"larger than {MAX_CONFIG_BYTES} bytes; a policy "
                                         "config is a small JSON object"])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PolicyConfigError(source, [f"byte {error.start} is not UTF-8 text; the file "
                                         "must be UTF-8 JSON"]) from None
    return parse_policy_config(parse_json(text, source), source)


def parse_json(text: str, source: str) -> Any:
    """Strict JSON: nested at most MAX_DEPTH levels (checked before parsing), no duplicate
    keys, no NaN or Infinity (not JSON, and a NaN threshold would silently turn a rule
    off). Raises PolicyConfigError."""
    depth, line = _deepest(text)
    if depth > MAX_DEPTH:
        raise PolicyConfigError(source, [f"line {line}: nested more than {MAX_DEPTH} levels "
                                         "deep"])
    try:
        return json.loads(text, parse_constant=_refuse_constant,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise PolicyConfigError(source, [f"line {error.lineno}: invalid JSON: {error.msg}"]
                                ) from None
    except ValueError as error:
        raise PolicyConfigError(source, [str(error)]) from None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')


def _deepest(text: str) -> tuple[int, int]:
    """(deepest bracket nesting outside strings, line where it is first reached)."""
    depth = deepest = 0
    line = deepest_line = 1
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > deepest:
                deepest, deepest_line = depth, line
                if deepest > MAX_DEPTH:
                    break
        elif token in "]}":
            depth -= 1
        else:
            line += token.count("\n")
    return deepest, deepest_line


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number; thresholds are finite numbers")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(f"{', '.join(map(json.dumps, duplicates))}: duplicate key; each key "
                         "may appear once")
    return dict(pairs)
