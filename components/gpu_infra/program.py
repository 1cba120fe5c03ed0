"""The Pulumi program: read the stack's config, build its layout (which judges it), export
outputs.

`run()` is the whole program; the project's `__main__.py` calls it (under `pulumi up` and
under the offline plan alike).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import pulumi
from pulumi.runtime import is_config_secret

from gpu_infra.knowhow import Finding
from gpu_infra.layouts import build_layout
from gpu_infra.layouts.judgement import judged_already as layout_judged_already
from gpu_infra.schema import (
    CLUSTER_KEY,
    PROJECT,
    REGION_KEY,
    ClusterConfig,
    ConfigError,
    parse_cluster_config,
)
from gpu_infra.schema.secrets import holds_secure_field_values, secure_field_paths

_PARSED: ContextVar[tuple[str, ClusterConfig] | None] = ContextVar("parsed", default=None)
"""The config the offline plan has parsed already: (its raw JSON, the cluster)."""


def _raw_json(raw: dict[str, Any]) -> str:
    return json.dumps(raw, sort_keys=True, default=str)


@contextmanager
def judged_already(raw: dict[str, Any], cluster: ClusterConfig,
                   findings: list[Finding]) -> Iterator[None]:
    """Within it, a program whose Pulumi config is exactly `raw` (the `gpu-infra:cluster`
    and `alicloud:region` values) takes `cluster` instead of parsing it again, and its
    layout takes `findings` instead of judging it again: the offline plan has done both
    from the same stack file."""
    token = _PARSED.set((_raw_json(raw), cluster))
    try:
        with layout_judged_already(cluster, findings):
            yield
    finally:
        _PARSED.reset(token)


def _parse(raw: dict[str, Any]) -> ClusterConfig:
    """The cluster of the raw config (judged_already's if it holds this very config).
    RunError for an invalid config."""
    parsed = _PARSED.get()
    if parsed is not None and parsed[0] == _raw_json(raw):
        return parsed[1]
    try:
        return parse_cluster_config(raw, source=f"stack {pulumi.get_stack()}")
    except ConfigError as error:
        raise pulumi.RunError("invalid stack config:\n" + "\n".join(error.problems)) from None


def cluster_from_pulumi_config() -> ClusterConfig:
    """Read `gpu-infra:cluster` and `alicloud:region` and validate them (its layout runs the
    named validators when it is built).

    Problems stop the program with a RunError (one line each, no traceback). The engine
    marks the whole cluster value secret when any leaf is `secure:`; with no field that may
    be secure set, the secret sits where it would leak, so the program stops (validate and
    plan name the exact path).
    """
    raw = {CLUSTER_KEY: pulumi.Config(PROJECT).get_object("cluster"),
           REGION_KEY: pulumi.Config("alicloud").get("region")}
    cluster = _parse({key: value for key, value in raw.items() if value is not None})
    if is_config_secret(CLUSTER_KEY) and not holds_secure_field_values(cluster):
        raise pulumi.RunError(
            f"invalid stack config:\n{CLUSTER_KEY}: holds a secure: value but none of the "
            f"fields that may be secure ({', '.join(sorted(secure_field_paths(type(cluster))))})"
            " is set: it would reach resources and the state in clear; `gpu-infra validate` "
            "names its path")
    return cluster


def run() -> None:
    """The program body: the validated config, its layout (which judges it: an ERROR
    finding stops the program with LayoutConfigError, a RunError), the layout's exports."""
    cluster = cluster_from_pulumi_config()
    layout = build_layout(cluster, pulumi.get_stack())
    for key, value in layout.exports.items():
        pulumi.export(key, value)
