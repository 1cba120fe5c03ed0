"""How a scaling fleet's SCALE_IN lifecycle hook reaches the instances that leave: an OOS
template that runs a Cloud Assistant command on each of them, then answers the action.

Sources: ESS CreateLifecycleHook (alibabacloud.com/help/en/auto-scaling/developer-reference/
api-createlifecyclehook, updated 2024-12-24): NotificationArn may name an OOS template as
`acs:ess:{region}:{account}:oos/{template}`, NotificationMetadata (at most 4096 characters)
then holds the template's parameters as JSON; ESS answers one action for all the instances
of a scaling activity (what CompleteLifecycleAction takes is the action's token, not an
instance). OOS public template ACS-ESS-LifeCycleRunCommand (alibabacloud.com/help/en/oos/
user-guide/acs-ess-lifecycleruncommand, updated 2025-12-23): parameters commandType
(RunShellScript), commandContent, timeout (seconds, default 600), lifecycleActionResult
(default ABANDON), regionId / instanceIds / lifecycleHookId / lifecycleActionToken
(defaults ${...} that ESS fills in), rateControl (default concurrency 10, no errors
allowed), OOSAssumeRole; it runs the command on every instance and then completes the
action with lifecycleActionResult; the policy it needs: ecs:RunCommand,
ecs:DescribeInvocations, ecs:DescribeInvocationResults on "*" and
ess:CompleteLifecycleAction. UNCONFIRMED: that ESS may start the execution with its service
role without a grant of ours, and that a failed command still completes the action (if not,
ESS continues at the hook's timeout, its default result).
"""

from __future__ import annotations

from typing import Final

LIFECYCLE_TEMPLATE: Final = "ACS-ESS-LifeCycleRunCommand"
"""The public OOS template the SCALE_IN hook starts."""
OOS_SERVICE: Final = "oos.aliyuncs.com"
"""The service principal the template's role trusts."""
RUN_COMMAND: Final = "ecs:RunCommand"
"""Run a Cloud Assistant command: on instances (scoped to the fleet's by its tag) and the
command object it creates."""
READ_COMMAND_ACTIONS: Final = ("ecs:DescribeInvocations", "ecs:DescribeInvocationResults")
ANSWER_ACTIONS: Final = ("ess:CompleteLifecycleAction",)
NOTIFICATION_METADATA_MAX: Final = 4096
"""Longest NotificationMetadata a hook takes (characters)."""
DRAIN_MARGIN_SECONDS: Final = 30
"""Seconds of the hook's wait left to the template after the drain's own limit: the command
and the answer must finish before ESS's timeout."""


def oos_template_arn(region: str, account: str, template: str = LIFECYCLE_TEMPLATE) -> str:
    """An OOS template as a lifecycle hook's notification target."""
    return f"acs:ess:{region}:{account}:oos/{template}"
