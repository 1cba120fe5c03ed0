"""Reading a stack file (`stacks/Pulumi.<stack>.yaml`) into a validated ClusterConfig.

Every problem becomes one line: the dotted field path as written in the stack file, what is
wrong, and what is allowed. Nothing here raises anything but ConfigError.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from gpu_infra.schema.base import SECRET_PLACEHOLDER
from gpu_infra.schema.document import load_plain, read_text
from gpu_infra.schema.environments import environment_names, with_environment
from gpu_infra.schema.node import GRID_PACKAGE_PATH
from gpu_infra.schema.problems import ConfigError, shorten
from gpu_infra.schema.registry import CLUSTER_ADAPTER, LAYOUT_MODELS, ClusterConfig
from gpu_infra.schema.secrets import misplaced_secrets, model_in, plaintext_credentials
from gpu_infra.schema.stack import ClusterBase

PROJECT = "gpu-infra"
CLUSTER_KEY = f"{PROJECT}:cluster"
REGION_KEY = "alicloud:region"


@dataclass(frozen=True)
class StackFile:
    """A stack file as read from disk, before validation."""

    name: str
    """Stack name, from `Pulumi.<name>.yaml`."""
    path: Path
    config: dict[str, Any]
    """The `config:` mapping, with `secure:` values replaced by SECRET_PLACEHOLDER."""
    secret_keys: list[str] = field(default_factory=list)
    """Dotted paths of the `secure:` values that could not be decrypted offline."""
    environments: list[str] = field(default_factory=list)
    """The Pulumi ESC environments the stack imports (`environment:`)."""
    notes: list[str] = field(default_factory=list)
    """What was done with the environments' values (treated as secrets, dropped)."""


def resolve_stack_path(ref: str, stacks_dir: Path) -> Path:
    """`ref` is a stack name (looked up as stacks_dir/Pulumi.<ref>.yaml) or a file path."""
    candidate = Path(ref)
    if candidate.suffix in {".yaml", ".yml"} or candidate.exists():
        return candidate
    return stacks_dir / f"Pulumi.{ref}.yaml"


def stack_name_of(path: Path) -> str:
    """`Pulumi.training-dev.yaml` -> `training-dev`."""
    stem = path.name.removesuffix(".yaml").removesuffix(".yml")
    return stem.removeprefix("Pulumi.")


def read_stack_file(path: Path, environment: Mapping[str, Any] | None = None) -> StackFile:
    """Parse the YAML (as Pulumi reads it, within the limits of schema.document) and replace
    `secure:` values; raise ConfigError if unreadable. `environment`: the `pulumiConfig` of
    the ESC environments the stack imports, resolved by the user (schema.environments), laid
    under the stack's own config."""
    source = str(path)
    if not path.exists():
        siblings = sorted(stack_name_of(p) for p in path.parent.glob("Pulumi.*.yaml"))
        hint = f"; stacks in {path.parent}: {', '.join(siblings)}" if siblings else ""
        raise ConfigError(source, [f"{source}: no such stack file{hint}"])
    document = load_plain(read_text(path), source)
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise ConfigError(source, [f"{source}: config: missing; a stack file is a mapping "
                                   "with a `config:` mapping"])
    secret_keys: list[str] = []
    config = {key: _strip_secrets(value, key, secret_keys)
              for key, value in document["config"].items()}
    wrong = [key for key in secret_keys if key.endswith(NOT_CIPHERTEXT)]
    if wrong:
        raise ConfigError(source, [
            f"{key.removesuffix(NOT_CIPHERTEXT)}: secure: must hold the encrypted text "
            "`pulumi config set --secret` writes (a non-empty string)" for key in wrong])
    environments = environment_names(document, source)
    notes: list[str] = []
    if environment:
        config, notes = with_environment(config, environment, CLUSTER_KEY, secret_keys)
    return StackFile(stack_name_of(path), path, config, secret_keys, environments, notes)


NOT_CIPHERTEXT = " (not ciphertext)"
"""Marks a `secure:` value that is no string (a number, null, a mapping) in the found list."""


def _strip_secrets(value: Any, path: str, found: list[str]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            ciphertext = value["secure"]
            ok = isinstance(ciphertext, str) and ciphertext.strip()
            found.append(path if ok else path + NOT_CIPHERTEXT)
            return SECRET_PLACEHOLDER
        return {key: _strip_secrets(item, f"{path}.{key}", found) for key, item in value.items()}
    if isinstance(value, list):
        return [_strip_secrets(item, f"{path}[{i}]", found) for i, item in enumerate(value)]
    return value


def parse_cluster_config(config: dict[str, Any], source: str = "stack") -> ClusterConfig:
    """The cluster config in a stack's `config:` mapping (`gpu-infra:cluster` plus
    `alicloud:region`), validated; raise ConfigError with every problem."""
    problems = [f"{key}: unknown key for project {PROJECT}; allowed: {CLUSTER_KEY}"
                for key in config if key.startswith(f"{PROJECT}:") and key != CLUSTER_KEY]
    cluster = config.get(CLUSTER_KEY)
    if cluster is None:
        problems.append(f"{CLUSTER_KEY}: missing; it holds the cluster's settings "
                        "(see `gpu-infra schema`)")
    elif not isinstance(cluster, dict):
        problems.append(f"{CLUSTER_KEY}: must be a mapping, got {type(cluster).__name__}")
    if config.get(REGION_KEY) is None:
        problems.append(f"{REGION_KEY}: missing; set the Alibaba Cloud region, e.g. "
                        "cn-hangzhou")
    if problems or not isinstance(cluster, dict):
        raise ConfigError(source, problems)
    try:
        parsed = CLUSTER_ADAPTER.validate_python({**cluster, "region": config[REGION_KEY]})
    except ValidationError as error:
        raise ConfigError(source, format_validation_error(error)) from None
    problems = inexact_integers(cluster, CLUSTER_KEY)  # after the fields' own bounds
    if problems:
        raise ConfigError(source, problems)
    return parsed


MAX_EXACT_INTEGER = 2**53 - 1
"""The largest integer every program of the stack carries exactly: Pulumi sends property
values as google.protobuf.Value, whose numbers are doubles (struct.proto `number_value`),
and the TypeScript SDK's numbers are JavaScript's (Number.MAX_SAFE_INTEGER)."""


def inexact_integers(value: Any, path: str) -> list[str]:
    """One problem per integer below `path` that Pulumi could not pass on exactly (beyond
    ±MAX_EXACT_INTEGER): no field of the stack means such a number."""
    if isinstance(value, dict):
        return [problem for key, item in value.items()
                for problem in inexact_integers(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [problem for index, item in enumerate(value)
                for problem in inexact_integers(item, f"{path}[{index}]")]
    if isinstance(value, int) and not isinstance(value, bool) and \
            abs(value) > MAX_EXACT_INTEGER:
        return [f"{shorten(path, 200)}: {shorten(str(value), 40)} is beyond the integers "
                f"Pulumi carries exactly (±{MAX_EXACT_INTEGER:,})"]
    return []


def layout_model(config: dict[str, Any]) -> type[BaseModel] | None:
    """The model of the layout a stack's raw `config` names, if it names a known one."""
    raw = config.get(CLUSTER_KEY)
    layout = raw.get("layout") if isinstance(raw, dict) else None
    return LAYOUT_MODELS.get(layout) if isinstance(layout, str) else None


def parse_secure_cluster(stack_file: StackFile) -> ClusterConfig:
    """The validated cluster of `stack_file`, refused (ConfigError) first, before the schema
    whose problems may quote a value, if a field holds a credential in clear or a `secure:`
    value the schema does not allow there."""
    model = layout_model(stack_file.config)
    problems = plaintext_credentials(model, CLUSTER_KEY, stack_file.config,
                                     stack_file.secret_keys)
    if model is not None:  # first: a secret's placeholder would also fail a field's pattern
        problems += misplaced_secrets(model, CLUSTER_KEY, stack_file.secret_keys)
    if problems:
        raise ConfigError(str(stack_file.path), problems)
    return parse_cluster_config(stack_file.config, str(stack_file.path))


def own_image_problems(cluster: ClusterConfig, stack_name: str) -> list[str]:
    """An image the stack would read from its own output (`from_stack` naming itself): an
    image stack starting from the image it bakes, a fleet booting itself. Neither can ever
    be created: the reference waits for an output the stack has not made."""
    image = getattr(cluster, "image", None)
    fleet = getattr(cluster, "fleet", None)
    choices = {"image.base": getattr(image, "base", None),
               "fleet.image": getattr(fleet, "image", None)}
    return [f"{CLUSTER_KEY}.{path}.from_stack: {stack_name!r} is this stack; an image comes "
            "from another stack's bake (an image stack of this project)"
            for path, choice in choices.items()
            if getattr(choice, "from_stack", None) == stack_name]


def stack_bucket_problems(cluster: ClusterConfig, stack_name: str) -> list[str]:
    """A GRID package in a bucket the nodes' role cannot read (ClusterBase.
    grid_package_problem, with the bucket names the stack gets as `stack_name`)."""
    if not isinstance(cluster, ClusterBase):
        return []
    problem = cluster.grid_package_problem(cluster.resolved_suffix(stack_name))
    return [f"{CLUSTER_KEY}.{GRID_PACKAGE_PATH}: {problem}"] if problem else []


def load_cluster_config(path: Path, environment: Mapping[str, Any] | None = None
                        ) -> tuple[StackFile, ClusterConfig]:
    """Read the stack file at `path` (with the resolved ESC `environment`, see
    read_stack_file) and validate its cluster config (secrets only where the schema marks
    them)."""
    stack_file = read_stack_file(path, environment)
    cluster = parse_secure_cluster(stack_file)
    problems = (own_image_problems(cluster, stack_file.name)
                + stack_bucket_problems(cluster, stack_file.name))
    if problems:
        raise ConfigError(str(path), problems)
    problems = misplaced_secrets(type(cluster), CLUSTER_KEY, stack_file.secret_keys)
    if problems:
        raise ConfigError(str(path), problems)
    return stack_file, cluster


def format_validation_error(error: ValidationError) -> list[str]:
    """One line per problem: `path: what is wrong (got ...); allowed ...`."""
    lines: list[str] = []
    for item in error.errors(include_url=False):
        loc = list(item["loc"])
        layout = str(loc.pop(0)) if loc and loc[0] in LAYOUT_MODELS else None
        kind = item["type"]
        if kind == "union_tag_not_found":
            lines.append(f"{CLUSTER_KEY}.layout: missing; allowed: {', '.join(LAYOUT_MODELS)}")
        elif kind == "union_tag_invalid":
            lines.append(f"{CLUSTER_KEY}.layout: {item['input'].get('layout')!r} is not a "
                         f"layout; allowed: {', '.join(LAYOUT_MODELS)}")
        elif kind == "extra_forbidden":
            allowed = _fields_at(LAYOUT_MODELS.get(layout) if layout else None, loc[:-1])
            hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
            lines.append(f"{_display_path(loc)}: unknown key{hint}")
        elif kind == "missing":
            lines.append(f"{_display_path(loc)}: missing (required)")
        elif kind == "value_error":
            message = str(item["ctx"]["error"]) if "ctx" in item else item["msg"]
            lines += [_nested_problem(loc, line) for line in message.splitlines()]
        else:
            got = item.get("input")
            shown = "" if isinstance(got, (dict, list)) else f" (got {shorten(repr(got), 60)})"
            lines.append(f"{_display_path(loc)}: {item['msg'][0].lower()}{item['msg'][1:]}"
                         f"{shown}{_strict_hint(kind, got)}")
    return lines


STRICT_TYPES = {"int_type": "an integer", "float_type": "a number", "bool_type": "a boolean"}
"""Error types of strict mode: a value of another JSON type, never converted."""


def _strict_hint(kind: str, got: Any) -> str:
    """How to write a value strict mode refused as `kind`. `pulumi config set --path` stores
    true/false as booleans and integers as integers but a decimal such as 1.5 as a string
    (pulumi sdk go/common/resource/config, adjustObjectValue): unquote it in the file."""
    if kind not in STRICT_TYPES or not isinstance(got, str) or not _reads_as(kind, got):
        return ""
    if kind == "bool_type":
        return "; a string is not a boolean: write true or false, unquoted"
    return f"; a string is not {STRICT_TYPES[kind]}: write it without quotes"


def _reads_as(kind: str, text: str) -> bool:
    """Whether `text` spells a value of the strict type `kind`."""
    if kind == "bool_type":
        return text.strip().lower() in {"true", "false", "yes", "no", "on", "off"}
    try:
        number = int(text) if kind == "int_type" else float(text)
    except ValueError:
        return False
    return math.isfinite(number)


def _nested_problem(loc: list[Any], line: str) -> str:
    """A model validator reports `sub.path: message`; attach the sub-path to `loc`."""
    head, sep, message = line.partition(": ")
    if sep and head and " " not in head:
        return f"{_display_path([*loc, *head.split('.')])}: {message}"
    return f"{_display_path(loc)}: {line}"


def _display_path(loc: list[Any]) -> str:
    if loc and loc[0] == "region":
        return REGION_KEY
    path = CLUSTER_KEY
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _fields_at(model: type[BaseModel] | None, loc: list[Any]) -> list[str]:
    """Field names of the model found at `loc` below `model` (empty if unknown)."""
    for part in loc:
        if model is None:
            return []
        if isinstance(part, int):
            continue
        field_info = model.model_fields.get(part)
        model = model_in(field_info.annotation) if field_info else None
    return [name for name in model.model_fields if name != "region"] if model else []
