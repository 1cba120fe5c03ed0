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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpu_infra_policies.base import ENFORCEMENT_LEVELS
from gpu_infra_policies.rules import RULES_BY_NAME, RuleSettings, default_settings

ALL = "all"
LEVEL_KEY = "enforcementLevel"


class PolicyConfigError(Exception):
    """A bad policy config file; `problems` holds one line per problem."""

    def __init__(self, source: str, problems: list[str]):
        super().__init__(f"{source}: " + "; ".join(problems))
        self.source = source
        self.problems = problems


def _type_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """What is wrong with `value` under a (small subset of) JSON schema, or None."""
    kind = schema.get("type")
    checks = {"number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "array": lambda v: isinstance(v, list)}
    if kind in checks and not checks[kind](value):
        article = "an" if kind[0] in "aeiou" else "a"
        return f"must be {article} {kind}, got {json.dumps(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(str, schema['enum']))}, got {json.dumps(value)}"
    if "minimum" in schema and value < schema["minimum"]:
        return f"must be at least {schema['minimum']}, got {value}"
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
    """Read and validate a policy config file (PolicyConfigError if unreadable or bad)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PolicyConfigError(str(path), [f"cannot read: {error.strerror}"]) from None
    except json.JSONDecodeError as error:
        raise PolicyConfigError(str(path), [f"line {error.lineno}: invalid JSON: {error.msg}"]
                                ) from None
    return parse_policy_config(data, str(path))
