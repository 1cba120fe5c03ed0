"""Names the cloud keeps unique beyond one stack: where each must be unique (all of Alibaba
Cloud, the account, or the account's region), its length and characters, with sources; and
the stack-wide suffix that keeps them apart (the stack file's `naming.global_suffix`).

Sources (read 2026-12-01):
  [OSS]  OSS bucket naming rules (help.aliyun.com/zh/oss/user-guide/bucket-naming-conventions):
         3-63 lowercase letters, digits and hyphens, starting and ending with a letter or
         digit, unique across all of Alibaba Cloud; provider: StringLenBetween(3, 63).
  [RAM]  RAM CreateRole (alibabacloud.com/help/en/resource-management/api-createrole, updated
         2025-12-15): RoleName 1-64 letters, digits, periods, hyphens; CreatePolicy: PolicyName
         1-128 letters, digits, hyphens. Both unique within the account (RAM is global).
  [ECS]  Key pairs belong to one region (ImportKeyPair RegionId); the provider validates
         key_pair_name StringLenBetween(2, 128) (resource_alicloud_ecs_key_pair.go).
  [NAS]  CreateAccessGroup (help.aliyun.com/document_detail/62630.html): AccessGroupName 3-64
         characters, starting with a letter; letters, digits, _ and -; per account and
         region (the ARN is acs:nas:{region}:{account}:accessgroup/{name}).
  [MNS]  Queues belong to one region of the account (the endpoint is per region); length
         UNCONFIRMED.
  [RM]   Resource Management resource groups: the SDK's ResourceGroup docstring
         (pulumi-alicloud 4.0.0): resource_group_name 3-50 letters, digits and hyphens,
         starting with a letter, the group's unique identifier in the account (Resource
         Management is account-wide); display_name 1-50 characters.
  [SLS]  Log projects: the SDK's log.Project docstring (pulumi-alicloud 4.0.0): 3-63
         lowercase letters, digits and hyphens, starting and ending with a letter or digit,
         globally unique in Alibaba Cloud.
  [OOS]  OOS parameters and encrypted parameters: 2-180 letters, digits, hyphens, underscores
         and slashes, not starting with ALIYUN, ACS, ALIBABA, ALICLOUD or OOS, unique per
         region of an account (provider resource_alicloud_oos_parameter.go line 45,
         terraform-provider-alicloud 81c43b672; OOS GetSecretParameter API reference, read
         2026-12-02: Name up to 180 characters).
  [FC]   Function Compute 3.0 function names: the provider's resource_alicloud_fcv3_function.go
         (81c43b672): letters, digits, underscores and hyphens, starting with a letter or
         an underscore, 1-128 characters; one per region of the account (its ARN is
         acs:fc:{region}:{account}:functions/{name}).
  Not listed: names the cloud does not keep unique (VPCs, vSwitches, security groups,
  deployment sets, scaling groups and configurations, EIPs, NAT gateways, alarms) and KMS
  aliases (unique per region of an account, but gpu-infra creates none).
  [CMS]  CloudMonitor alert contacts, contact groups, event rules, metric rule templates and
         resource metric rules are account-wide names (PutContact, PutContactGroup and
         PutEventRule update the one with that name); lengths UNCONFIRMED, except:
  [CMS-CONTACT] ALIYUN::CMS::Contact (alibabacloud.com/help/ros/developer-reference/
         aliyun-cms-contact, updated 2026-06-08): ContactName 2-40 characters. That page
         names only letters, digits, periods and underscores, but the API takes hyphens: the
         provider's acceptance test creates `tf-testAccCmsAlarmContact<n>` against the real
         API (alicloud/resource_alicloud_cms_alarm_contact_test.go, terraform-provider-alicloud
         81c43b672) and its docs' example is `tf-example`; so no pattern is enforced here.
  [CMS-NAMESPACE] Hybrid Cloud Monitoring namespaces: lowercase letters, digits and hyphens
         (TF resource_alicloud_cms_namespace.go line 33, 81c43b672), one per account (the
         metric store an alarm names); length UNCONFIRMED.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from gpu_infra_facts.types import (
    ALARM_CONTACT,
    ALARM_CONTACT_GROUP,
    BUCKET,
    CMS_METRIC_RULE_TEMPLATE,
    CMS_NAMESPACE,
    EVENT_RULE,
    FC_FUNCTION,
    KEY_PAIR,
    LOG_PROJECT,
    MNS_QUEUE,
    NAS_ACCESS_GROUP,
    OOS_PARAMETER,
    OOS_SECRET_PARAMETER,
    RAM_POLICY,
    RAM_ROLE,
    RESOURCE_GROUP,
    SERVICE_METRIC_ALARM_RULE,
)

Scope = Literal["alibaba", "account", "region"]
"""Where a name must be unique: all of Alibaba Cloud, one account, one region of one account."""

BUCKET_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")
"""OSS bucket names: 3-63 lowercase letters, digits, hyphens; start and end alphanumeric [OSS]."""


@dataclass(frozen=True)
class UniqueName:
    """One input holding a name the cloud keeps unique."""

    field: str
    """The Pulumi input (camelCase, as plans record it)."""
    scope: Scope
    max_length: int | None
    """Longest name the cloud accepts; None when no source states it."""
    pattern: re.Pattern[str] | None
    """Characters the cloud accepts (the whole name); None when no source states them."""
    source: str


OOS_NAME_PATTERN = re.compile(r"^(?!ALIYUN|ACS|ALIBABA|ALICLOUD|OOS)[A-Za-z0-9_/-]{2,180}$")
"""OOS (encrypted) parameter names [OOS]."""

UNIQUE_NAMES: dict[str, UniqueName] = {
    BUCKET: UniqueName("bucket", "alibaba", 63, BUCKET_NAME_PATTERN, "OSS"),
    RAM_ROLE: UniqueName("roleName", "account", 64, re.compile(r"^[A-Za-z0-9.-]{1,64}$"),
                         "RAM"),
    RAM_POLICY: UniqueName("policyName", "account", 128,
                           re.compile(r"^[A-Za-z0-9-]{1,128}$"), "RAM"),
    KEY_PAIR: UniqueName("keyPairName", "region", 128, None, "ECS"),
    NAS_ACCESS_GROUP: UniqueName("accessGroupName", "region", 64,
                                 re.compile(r"^[A-Za-z][A-Za-z0-9_-]{2,63}$"), "NAS"),
    MNS_QUEUE: UniqueName("queueName", "region", None, None, "MNS"),
    ALARM_CONTACT: UniqueName("alarmContactName", "account", 40, None, "CMS-CONTACT"),
    ALARM_CONTACT_GROUP: UniqueName("alarmContactGroupName", "account", None, None, "CMS"),
    EVENT_RULE: UniqueName("ruleName", "account", None, None, "CMS"),
    CMS_METRIC_RULE_TEMPLATE: UniqueName("metricRuleTemplateName", "account", None, None, "CMS"),
    CMS_NAMESPACE: UniqueName("namespace", "account", None, re.compile(r"^[a-z0-9-]+$"),
                              "CMS-NAMESPACE"),
    SERVICE_METRIC_ALARM_RULE: UniqueName("metricAlarmRuleId", "account", None, None, "CMS"),
    RESOURCE_GROUP: UniqueName("resourceGroupName", "account", 50,
                               re.compile(r"^[A-Za-z][A-Za-z0-9-]{2,49}$"), "RM"),
    LOG_PROJECT: UniqueName("projectName", "alibaba", 63, BUCKET_NAME_PATTERN, "SLS"),
    OOS_PARAMETER: UniqueName("parameterName", "region", 180, OOS_NAME_PATTERN, "OOS"),
    OOS_SECRET_PARAMETER: UniqueName("secretParameterName", "region", 180, OOS_NAME_PATTERN,
                                     "OOS"),
    FC_FUNCTION: UniqueName("functionName", "region", 128,
                            re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$"), "FC"),
}
"""Type token -> its unique name input. The suffix goes on every one of them."""

NO_SUFFIX, AUTO_SUFFIX = "none", "auto"
"""The two keywords of `naming.global_suffix`; anything else is a literal suffix."""
LITERAL_SUFFIX_PATTERN = r"^[a-z0-9]{3,8}$"
"""A literal suffix: 3-8 lowercase letters and digits (it also goes into bucket names)."""
AUTO_SUFFIX_LENGTH = 8
"""Hex digits of the `auto` suffix (32 bits of SHA-256)."""
MAX_SUFFIX_LENGTH = 8
"""The longest suffix: a literal one has at most 8 characters, `auto` 8 hex digits."""


def auto_suffix(*, stack_name: str, region: str, cluster: str) -> str:
    """The `auto` suffix: the first 8 hex digits of SHA-256 over the Pulumi stack name, the
    region and the cluster name. Known offline and under `pulumi up` alike (no account id),
    stable while those three stay, different when any differs."""
    digest = hashlib.sha256(f"{stack_name}\n{region}\n{cluster}".encode()).hexdigest()
    return digest[:AUTO_SUFFIX_LENGTH]


def resolve_suffix(setting: str, *, stack_name: str, region: str,
                   cluster: str) -> str | None:
    """The suffix `naming.global_suffix` stands for: None for `none`, the hash for `auto`,
    else the literal itself."""
    if setting == NO_SUFFIX:
        return None
    if setting == AUTO_SUFFIX:
        return auto_suffix(stack_name=stack_name, region=region, cluster=cluster)
    return setting


def child_name(component: str, suffix: str) -> str:
    """`train-dev` + `vpc` -> `train-dev-vpc`: children are named after their component."""
    return f"{component}-{suffix}"


def with_suffix(name: str, suffix: str | None) -> str:
    """`llm-train-node-role` + `1a2b3c4d` -> `llm-train-node-role-1a2b3c4d`."""
    return f"{name}-{suffix}" if suffix else name


SHORTENED_DIGEST_LENGTH = 6
"""Hex digits that end a shortened name (24 bits of SHA-256 of the whole name)."""


def fit_name(type_token: str, name: str, suffix: str | None) -> str:
    """`name` with `suffix` (with_suffix), shortened when longer than `type_token`'s
    limit: the name is cut and ends in `-<6 hex digits of its SHA-256>`, before the suffix,
    so a derived name (a contact beside a long cluster name) never makes a valid stack
    invalid. Deterministic; unchanged when it fits (no existing name moves)."""
    full = with_suffix(name, suffix)
    rule = UNIQUE_NAMES.get(type_token)
    if rule is None or rule.max_length is None or len(full) <= rule.max_length:
        return full
    digest = hashlib.sha256(name.encode()).hexdigest()[:SHORTENED_DIGEST_LENGTH]
    room = rule.max_length - len(full) + len(name) - SHORTENED_DIGEST_LENGTH - 1
    return with_suffix(f"{name[:room].rstrip('-')}-{digest}", suffix)


def name_problems(type_token: str, name: str) -> list[str]:
    """What is wrong with `name` as the unique name of `type_token` (empty when fine)."""
    rule = UNIQUE_NAMES.get(type_token)
    if rule is None:
        return []
    problems = []
    if rule.max_length is not None and len(name) > rule.max_length:
        problems.append(f"{name!r} is {len(name)} characters; {rule.field} takes at most "
                        f"{rule.max_length} [{rule.source}]")
    if rule.pattern is not None and not rule.pattern.match(name):
        problems.append(f"{name!r} is not a valid {rule.field} [{rule.source}]")
    return problems
