"""Function Compute 3.0 facts for the functions a stack deploys (fc.V3Function, fc.V3Trigger).

Sources: the provider's resource_alicloud_fcv3_function.go and
resource_alicloud_fcv3_trigger.go at the commit in update_semantics.json (runtime values,
cpu 0.05-16, memory_size 64-32768, disk_size at least 512, timeout 0-86400; trigger_type
list); Function Compute "Timer triggers" (FC 3.0): trigger_config {"cronExpression",
"payload", "enable"}, `@every <n>m` with a minimum of one minute (every ESS alarm period is
a whole number of minutes); "Grant Function Compute permissions to access other cloud
services": a function's role trusts the service `fc.aliyuncs.com`, and the Python runtime
passes its temporary keys to the handler as `context.credentials` (access_key_id,
access_key_secret, security_token).
Logs: fc.V3Function `log_config {project, logstore, log_begin_rule, enable_request_metrics,
enable_instance_metrics}`, updated in place (resource_alicloud_fcv3_function.go lines 441-473
and 1479); Function Compute writes a function's logs with the function's role (Serverless
Devs' FC service reference: the role "sends the logs the function produces to the user's
logstore"), which therefore needs the SLS write action on that store.
"""

from __future__ import annotations

from typing import Final

FC_SERVICE: Final = "fc.aliyuncs.com"
"""The service principal a function's RAM role trusts."""
PYTHON_RUNTIME: Final = "python3.10"
"""fc.V3Function `runtime` of the stack's functions (standard library only)."""
LATEST_QUALIFIER: Final = "LATEST"
"""fc.V3Trigger `qualifier`: the function's newest code."""
TIMER_TRIGGER: Final = "timer"
"""fc.V3Trigger `trigger_type` of a function run on a schedule."""
SMALLEST_CPU: Final = 0.05
"""fc.V3Function `cpu`, in vCPU: the provider's minimum."""
SMALLEST_MEMORY_MB: Final = 128
"""fc.V3Function `memory_size` with SMALLEST_CPU (memory must be 1 to 4 GB per vCPU
rounded to 64 MB multiples; 128 MB is the smallest size the console offers at 0.05 vCPU;
UNCONFIRMED beyond the provider's 64-32768 range)."""
SMALLEST_DISK_MB: Final = 512
"""fc.V3Function `disk_size`: the provider's minimum."""
LOG_BEGIN_RULE: Final = "DefaultRegex"
"""fc.V3Function `log_config.log_begin_rule` (None or DefaultRegex, provider line 455): a
new log entry starts at a line that begins with a date, so a traceback stays one entry."""
PUT_LOGS_ACTION: Final = "log:PostLogStoreLogs"
"""The RAM action that writes logs to a store (SLS API PutLogs; resource
`acs:log:<region>:<account>:project/<project>/logstore/<store>`, SLS "RAM policies"
reference)."""
CU_PER_INVOCATION: Final = 75 / 10_000
CU_PER_VCPU_SECOND: Final = 1.0
CU_PER_MEMORY_GB_SECOND: Final = 0.15
CU_PER_DISK_GB_SECOND: Final = 0.05
"""What one invocation and one second of an active vCPU, of a GB of memory and of a GB of
disk count in compute units (CU), the unit Function Compute 3.0 bills pay-as-you-go (idle
vCPUs count 0). Source: Function Compute "Pay-as-you-go" (alibabacloud.com/help/en/
functioncompute/fc-3-0/product-overview/pay-as-you-go-billing-method-1, updated 2024-08-28;
help.aliyun.com/en/functioncompute/fc/product-overview/pay-as-you-go-billing-methods, read
2026-12-02, the same factors)."""
EVERY_PATTERN: Final = r"^@every (\d+)m$"
"""A timer trigger's `cronExpression` that runs every N minutes (the form the stack uses)."""
