"""A layout judges its config before it builds anything, the way `gpu-infra validate` and
the stack-file program do: the named validators and the node plan's checks
(gpu_infra.nodeplan.judge_stack), `suppress:` honoured. ERRORs stop the construction with
LayoutConfigError; WARNING and INFO findings go to Pulumi's log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import cast

import pulumi

from gpu_infra.knowhow import Finding, Level, errors_in
from gpu_infra.nodeplan import judge_stack
from gpu_infra.schema import ClusterCommon, ClusterConfig
from gpu_infra.schema.node import GRID_PACKAGE_PATH
from gpu_infra.schema.stack import ClusterBase

GRID_PACKAGE_UNREADABLE = "grid-package-unreadable"
"""The finding of a GRID package the nodes' role cannot read (checked by the loader too,
which knows the stack name; the validators do not)."""


class LayoutConfigError(pulumi.RunError):
    """The named validators found ERRORs in a layout's config: nothing was built.

    `findings` holds the ERROR findings, each with its field path under the config (e.g.
    `fleet.instance_type`). A RunError: `pulumi up` prints the message, not a traceback.
    """

    def __init__(self, name: str, findings: Sequence[Finding]):
        lines = "\n".join(finding.line() for finding in findings)
        super().__init__(f"layout {name!r} not built: its config has {len(findings)} "
                         f"ERROR finding(s):\n{lines}")
        self.name = name
        self.findings = list(findings)


_JUDGED: ContextVar[tuple[ClusterCommon, list[Finding]] | None] = ContextVar(
    "layout_judged", default=None)
"""A config judged already (by the offline plan) and its findings."""


@contextmanager
def judged_already(config: ClusterCommon, findings: list[Finding]) -> Iterator[None]:
    """Within it, a layout built from this very config object takes `findings` instead of
    judging it again (the offline plan judged the stack file before running the program)."""
    token = _JUDGED.set((config, findings))
    try:
        yield
    finally:
        _JUDGED.reset(token)


def judge_layout_config(name: str, config: ClusterCommon,
                        global_suffix: str | None) -> list[Finding]:
    """The findings of `config` (judge_stack, or judged_already's for this very object),
    and an ERROR GRID_PACKAGE_UNREADABLE when its GRID package lies in a bucket the nodes'
    role cannot read (the stack's bucket names end in `global_suffix`, the resolved one);
    each WARNING logged with pulumi.log.warn, each INFO with pulumi.log.info.

    Raises LayoutConfigError when any finding is an ERROR (nothing is logged then: the
    error names them all).
    """
    judged = _JUDGED.get()
    if judged is not None and judged[0] is config:
        findings = judged[1]
    else:
        # a layout's CONFIG is one of ClusterConfig's models (tests/test_layout_registry.py)
        findings = judge_stack(cast(ClusterConfig, config))
    problem = (config.grid_package_problem(global_suffix)
               if isinstance(config, ClusterBase) else None)
    if problem:
        findings = [*findings, Finding(GRID_PACKAGE_UNREADABLE, Level.ERROR,
                                       GRID_PACKAGE_PATH, problem)]
    errors = errors_in(findings)
    if errors:
        raise LayoutConfigError(name, errors)
    for finding in findings:
        log = pulumi.log.info if finding.level is Level.INFO else pulumi.log.warn
        log(finding.line())
    return findings


__all__ = ["LayoutConfigError", "judge_layout_config", "judged_already"]
