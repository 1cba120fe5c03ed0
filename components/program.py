"""What the Pulumi program needs under the real engine: the validated stack config."""

from __future__ import annotations

import pulumi

from .config import CLUSTER_KEY, PROJECT, REGION_KEY, ConfigError, StackConfig, parse_stack
from .validation import Level, errors_in, run_validators


def stack_from_pulumi_config() -> StackConfig:
    """Read `gpu-infra:cluster` and `alicloud:region`, validate them and run the validators.

    Problems stop the program with a RunError (one line each, no traceback); WARNING and INFO
    findings are logged.
    """
    raw = {CLUSTER_KEY: pulumi.Config(PROJECT).get_object("cluster"),
           REGION_KEY: pulumi.Config("alicloud").get("region")}
    try:
        stack = parse_stack({key: value for key, value in raw.items() if value is not None},
                            source=f"stack {pulumi.get_stack()}")
    except ConfigError as error:
        raise pulumi.RunError("invalid stack config:\n" + "\n".join(error.problems)) from None
    findings = run_validators(stack)
    for finding in findings:
        log = pulumi.log.info if finding.level is Level.INFO else pulumi.log.warn
        log(finding.line())
    if errors_in(findings):
        raise pulumi.RunError("\n".join(finding.line() for finding in errors_in(findings)))
    return stack
