"""Config a stack imports from Pulumi ESC environments (`environment:` in the stack file),
read offline from the values the user resolved with `esc env open <env>`.

Sources: Pulumi "Stack settings file reference" (`environment`: an environment definition
or a list of environments); ESC "Outputs" (the reserved `pulumiConfig` property of an opened
environment becomes stack configuration, and "the explicit stack value wins"; a key without
a namespace gets the project's, as every Pulumi config key); `esc env open` prints the
opened environment's values as JSON, secrets revealed.

Offline, nothing here reaches Pulumi Cloud: `environment_names` says what the stack imports
(so a command can say which environments it cannot see), and `with_environment` lays the
resolved `pulumiConfig` under the stack's own config. A resolved value the stack marks
nowhere as secret is treated as one where the schema allows a secret (MaybeSecure fields)
and dropped where it is a provider credential: `esc env open` reveals secrets in clear, and
no secret may reach a plan."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpu_infra.schema.base import SECRET_PLACEHOLDER
from gpu_infra.schema.problems import ConfigError, shorten
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra.schema.secrets import may_be_secure
from gpu_infra_facts.credentials import PROVIDER_CREDENTIAL_KEYS

PULUMI_CONFIG = "pulumiConfig"
"""The reserved property of an opened environment that holds stack configuration."""
INLINE = "(the stack file's inline environment definition)"


def environment_names(document: Mapping[str, Any], source: str) -> list[str]:
    """The environments the stack file imports: `environment: [a, b]` or an inline definition
    (`environment: {imports: [...], values: {...}}`, named INLINE; its imports too). An
    import is a name or a one-key mapping `{name: {merge: false}}`. ConfigError if
    `environment:` has another shape."""
    declared = document.get("environment")
    if declared is None:
        return []
    if isinstance(declared, list):
        imports: Any = declared
        names: list[str] = []
    elif isinstance(declared, dict):
        imports = declared.get("imports") or []
        names = [INLINE] if declared.get("values") else []
    else:
        raise ConfigError(source, [f"{source}: environment: must be a list of ESC environment "
                                   "names or an environment definition"])
    if not isinstance(imports, list):
        raise ConfigError(source, [f"{source}: environment.imports: must be a list"])
    for index, item in enumerate(imports):
        if isinstance(item, str) and item:
            names.append(item)
        elif isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item)), str):
            names.append(next(iter(item)))
        else:
            raise ConfigError(source, [f"{source}: environment[{index}]: must be an "
                                       "environment name"])
    return names


def read_pulumi_config(path: Path, project: str) -> dict[str, Any]:
    """The namespaced `pulumiConfig` of the file at `path`, the JSON `esc env open` printed;
    ConfigError (one line naming the file) if it cannot be read or is not such JSON (NaN and
    Infinity are not JSON)."""
    source = str(path)
    try:
        values = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_json)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(source, [f"{source}: cannot read: {error}"]) from None
    except (ValueError, RecursionError) as error:
        raise ConfigError(source, [f"{source}: invalid JSON ({shorten(str(error), 120)})"]
                          ) from None
    return pulumi_config(values, source, project)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def pulumi_config(values: Any, source: str, project: str) -> dict[str, Any]:
    """The stack configuration in an opened environment's `values` (the JSON of `esc env
    open`), with every key namespaced (`cluster` -> `<project>:cluster`)."""
    if not isinstance(values, dict):
        raise ConfigError(source, [f"{source}: must hold a JSON object, the output of `esc "
                                   "env open <environment>`"])
    config = values.get(PULUMI_CONFIG, {})
    if not isinstance(config, dict):
        raise ConfigError(source, [f"{source}: {PULUMI_CONFIG}: must be an object of config "
                                   "keys"])
    return {key if ":" in key else f"{project}:{key}": value for key, value in config.items()}


def with_environment(config: dict[str, Any], imported: Mapping[str, Any], cluster_key: str,
                     secret_keys: list[str]) -> tuple[dict[str, Any], list[str]]:
    """`config` over `imported` (the stack's own value of a key wins, as Pulumi has it): the
    merged config and a note per imported value treated as a secret or dropped. Values at
    MaybeSecure paths of the cluster become SECRET_PLACEHOLDER (their paths added to
    `secret_keys`); provider credentials are dropped (offline needs none)."""
    notes: list[str] = []
    merged = dict(config)
    for key, value in imported.items():
        if key in config:
            continue
        if key in PROVIDER_CREDENTIAL_KEYS:
            notes.append(f"{key}: from the environment, not used offline (a credential)")
            continue
        merged[key] = _secured(value, key, cluster_key, secret_keys, notes) \
            if key == cluster_key and isinstance(value, dict) else value
    return merged, notes


def _secured(cluster: dict[str, Any], key: str, cluster_key: str, secret_keys: list[str],
             notes: list[str]) -> dict[str, Any]:
    layout = cluster.get("layout")
    model = LAYOUT_MODELS.get(layout) if isinstance(layout, str) else None
    if model is None:
        return cluster

    def walk(value: Any, parts: tuple[str | int, ...]) -> Any:
        if isinstance(value, dict):
            return {name: walk(item, (*parts, name)) for name, item in value.items()}
        if isinstance(value, list):
            return [walk(item, (*parts, index)) for index, item in enumerate(value)]
        if value is not None and may_be_secure(model, parts):
            path = key + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
            secret_keys.append(path)
            notes.append(f"{path}: from the environment, treated as a secret")
            return SECRET_PLACEHOLDER
        return value

    secured: dict[str, Any] = walk(cluster, ())
    return secured
