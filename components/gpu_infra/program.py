"""The Pulumi program: read the stack's config, judge it, build its layout, export outputs.

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

from gpu_infra.knowhow import Finding, Level, errors_in
from gpu_infra.layouts import build_layout
from gpu_infra.nodeplan import judge_stack
from gpu_infra.schema import (
    CLUSTER_KEY,
    PROJECT,
    REGION_KEY,
    ClusterConfig,
    ConfigError,
    parse_cluster_config,
)
from gpu_infra.schema.secrets import holds_secure_field_values, secure_field_paths

_JUDGED: ContextVar[tuple[str, ClusterConfig, list[Finding]] | None] = ContextVar(
    "judged", default=None)
"""The config the offline plan has parsed and judged already: (its raw JSON, the cluster,
the findings)."""


def _raw_json(raw: dict[str, Any]) -> str:
    return json.dumps(raw, sort_keys=True, default=str)


@contextmanager
def judged_already(raw: dict[str, Any], cluster: ClusterConfig,
                   findings: list[Finding]) -> Iterator[None]:
    """Within it, a program whose Pulumi config is exactly `raw` (the `gpu-infra:cluster`
    and `alicloud:region` values) takes `cluster` and `findings` instead of parsing and
    judging them again: the offline plan has done both from the same stack file."""
    token = _JUDGED.set((_raw_json(raw), cluster, findings))
    try:
        yield
    finally:
        _JUDGED.reset(token)


def _parse_and_judge(raw: dict[str, Any]) -> tuple[ClusterConfig, list[Finding]]:
    """The cluster of the raw config and its findings (those of judged_already if it holds
    this very config). RunError for an invalid config."""
    judged = _JUDGED.get()
    if judged is not None and judged[0] == _raw_json(raw):
        return judged[1], judged[2]
    try:
        cluster = parse_cluster_config(raw, source=f"stack {pulumi.get_stack()}")
    except ConfigError as error:
        raise pulumi.RunError("invalid stack config:\n" + "\n".join(error.problems)) from None
    return cluster, judge_stack(cluster)


def cluster_from_pulumi_config() -> ClusterConfig:
    """Read `gpu-infra:cluster` and `alicloud:region`, validate them and run the validators.

    Problems stop the program with a RunError (one line each, no traceback); WARNING and INFO
    findings are logged. The engine marks the whole cluster value secret when any leaf is
    `secure:`; with no field that may be secure set, the secret sits where it would leak, so
    the program stops (validate and plan name the exact path).
    """
    raw = {CLUSTER_KEY: pulumi.Config(PROJECT).get_object("cluster"),
           REGION_KEY: pulumi.Config("alicloud").get("region")}
    cluster, findings = _parse_and_judge({key: value for key, value in raw.items()
                                          if value is not None})
    if is_config_secret(CLUSTER_KEY) and not holds_secure_field_values(cluster):
        raise pulumi.RunError(
            f"invalid stack config:\n{CLUSTER_KEY}: holds a secure: value but none of the "
            f"fields that may be secure ({', '.join(sorted(secure_field_paths(type(cluster))))})"
            " is set: it would reach resources and the state in clear; `gpu-infra validate` "
            "names its path")
    for finding in findings:
        log = pulumi.log.info if finding.level is Level.INFO else pulumi.log.warn
        log(finding.line())
    if errors_in(findings):
        raise pulumi.RunError("\n".join(finding.line() for finding in errors_in(findings)))
    return cluster


def run() -> None:
    """The program body: the validated config, its layout, the layout's exports."""
    cluster = cluster_from_pulumi_config()
    layout = build_layout(cluster, pulumi.get_stack())
    for key, value in layout.exports.items():
        pulumi.export(key, value)
