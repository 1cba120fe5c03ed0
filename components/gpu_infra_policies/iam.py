"""RAM rules, judged on effective permissions: wildcard actions and resources in any
spelling, NotAction / NotResource, privilege escalation, trust policies, access keys."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    contains_unknown,
    is_unknown,
    number,
)
from gpu_infra_policies.documents import (
    Statement,
    UnreadableDocument,
    matches,
    read_document,
    statement,
    strings,
)

DOCUMENT_INPUTS: dict[str, tuple[str, ...]] = {
    t.RAM_POLICY: ("policyDocument", "document"),
    t.RAM_ROLE: ("assumeRolePolicyDocument", "document"),
    t.BUCKET_POLICY: ("policy",),
    t.BUCKET: ("policy",),
    t.KMS_KEY: ("policy",),
    t.KMS_SECRET: ("policy",),
    t.LOG_PROJECT: ("policy",),
}
"""Types holding a policy document, and the inputs (current first, deprecated after)."""
RUN_COMMAND = "ecs:RunCommand"
SELF_ESCALATION = ("ram:AttachPolicyToRole", "ram:AttachPolicyToUser", "ram:AttachPolicyToGroup",
                   "ram:CreatePolicyVersion", "ram:SetDefaultPolicyVersion", "ram:UpdateRole",
                   "ram:CreateAccessKey", "ram:CreateLoginProfile", "ram:UpdateLoginProfile",
                   "ram:AddUserToGroup", "ram:UpdatePolicyVersion", "ecs:InvokeCommand",
                   RUN_COMMAND, "ecs:AttachInstanceRamRole", "sts:AssumeRole")
"""Actions that, on any role, user, group, policy or node, hand the holder more than it
has: attach a policy to itself, rewrite a policy or a trust policy, mint a key or a console
login for another user, run commands on nodes holding stronger roles (RunCommand on the
instances one resource tag names is scoped: _commands_on_tagged_nodes), assume any role."""
LAUNCH_ACTIONS = ("ecs:RunInstances", "ecs:CreateInstance", "ess:CreateScalingConfiguration",
                  "ess:ModifyScalingConfiguration", "ecs:CreateLaunchTemplate",
                  "ecs:CreateLaunchTemplateVersion", "cs:CreateClusterNodePool",
                  "cs:ModifyClusterNodePool", "cs:CreateCluster", "eci:CreateContainerGroup",
                  "fc:CreateFunction", "fc:UpdateFunction", "fc:CreateService",
                  "fc:UpdateService", "oos:StartExecution", "ros:CreateStack")
"""Actions that start compute (nodes, clusters, containers, functions, automation runs)
under a role of the caller's choosing (with ram:PassRole)."""
PASS_ROLE = "ram:PassRole"
ASSUME_ROLE = "sts:AssumeRole"
SERVICE_SUFFIX = ".aliyuncs.com"
SERVICE_MODULES = {"ecs": ("ecs", "ess", "cs"), "ess": ("ess",), "cs": ("cs",),
                   "oos": ("oos", "ess")}
"""Trusted service (principal `<name>.aliyuncs.com`) -> the SDK modules whose resources use
it (OOS: also ESS, whose lifecycle hooks start OOS templates); any other service maps to the
module of its own name."""


def document_values(resource: Resource) -> Iterator[tuple[str, Any]]:
    """(input, value) of the resource's policy document, if it has one."""
    for key in DOCUMENT_INPUTS.get(resource.type, ()):
        value = resource.props.get(key)
        if value not in (None, ""):
            yield key, value
            return


def statements_of(resource: Resource) -> list[Statement]:
    """The statements of the resource's document (none if unreadable: the
    policy-documents-readable rule reports that), plus ram.Policy's deprecated
    `statements` input."""
    found: list[Statement] = []
    for _, value in document_values(resource):
        with suppress(UnreadableDocument):
            found += read_document(value) or []
    if resource.type == t.RAM_POLICY:
        found += [statement({"Effect": s.get("effect"), "Action": s.get("actions"),
                             "Resource": s.get("resources")})
                  for s in as_list(resource.props.get("statements")) if isinstance(s, Mapping)]
    return found


def readable(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Every policy document (RAM policy, trust policy, bucket policy) can be read: a
    document too deep, too long or not a policy cannot be judged, so it is reported."""
    for key, value in document_values(resource):
        try:
            read_document(value)
        except UnreadableDocument as problem:
            yield f"{key} {problem}; it cannot be judged: write a plain policy document"


def wildcard_action(action: str) -> bool:
    """`*`, `*:*` or `<service>:*`: every action (of a service)."""
    return set(action.partition(":")[2] or action) == {"*"}


def _only_wildcards(text: str) -> bool:
    return bool(text) and set(text) <= set("*/?")


def wildcard_resource(resource: str) -> bool:
    """Every resource of a service: `*`, or an ARN whose resource part names nothing
    (`acs:*:*:*:*`, `acs:ecs:*:*:*`, `acs:oss:*:*:*/*`) or only a resource type
    (`acs:ecs:*:*:instance/*`, `acs:ram:*:*:role/*`); for OSS the first segment is a bucket
    name, so `acs:oss:*:*:ckpt/*` is one bucket."""
    parts = resource.split(":", 4)
    if resource.strip() == "*":
        return True
    if len(parts) != 5 or parts[0].lower() != "acs":
        return False
    service, path = parts[1].lower(), parts[4]
    if _only_wildcards(path):
        return True
    kind, _, rest = path.partition("/")
    return service not in ("oss", "*") and bool(kind) and _only_wildcards(rest)


def _grants(resource: Resource) -> Iterator[str]:
    for s in statements_of(resource):
        if not s.allows:
            continue
        if s.not_actions:
            yield (f"policy allows every action except {sorted(s.not_actions)} (Allow with "
                   "NotAction)")
        if s.not_resources:
            yield (f"policy allows {sorted(s.actions or s.not_actions)} on every resource "
                   f"except {sorted(s.not_resources)} (Allow with NotResource)")
        actions = sorted(a for a in s.actions if wildcard_action(a))
        resources = [r for r in s.resources if wildcard_resource(r)]
        if actions and resources:
            yield f"policy allows {actions} on every resource ({', '.join(resources)})"


def admin_policies(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """RAM policies granting every action of a service (`*`, `ecs:*`) on every resource
    (`*`, `acs:*:*:*:*`, `acs:ecs:*:*:instance/*`), Allow with NotAction or NotResource;
    attachments of admin-level system policies (`forbiddenSystemPolicies`: names or
    patterns, default AdministratorAccess and every `*FullAccess`) to roles, users or
    groups."""
    props = resource.props
    if resource.type == t.RAM_POLICY:
        yield from _grants(resource)
    elif resource.type in t.RAM_POLICY_ATTACHMENTS:
        policy = props.get("policyName")
        if props.get("policyType") == "System" and isinstance(policy, str) and any(
                matches(pattern, policy) for pattern in cfg["forbiddenSystemPolicies"]):
            who = next((f"{kind} {props[key]}" for kind, key in (
                ("role", "roleName"), ("user", "userName"), ("group", "groupName"))
                if key in props), "principal")
            yield f"{who} gets the admin-level system policy {policy}"


def _any_role(resource_pattern: str) -> bool:
    """True if the pattern matches roles it does not name (a wildcard in the role part)."""
    return "*" in resource_pattern.rpartition(":")[2] or resource_pattern == "*"


def escalation(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """A RAM policy that lets its holder pass any role (ram:PassRole on a wildcard) and
    start compute under it (LAUNCH_ACTIONS: instances, ESS configurations, launch templates,
    ACK clusters and node pools, ECI, Function Compute, OOS, ROS): the holder can run code
    under a stronger role and read its credentials; or that grants, on a wildcard
    resource, an action that raises its own rights (SELF_ESCALATION: attach policies,
    rewrite policy versions or trust policies, create keys or logins for others, run
    commands on any node, assume any role)."""
    if resource.type != t.RAM_POLICY:
        return
    allowed = [s for s in statements_of(resource) if s.allows]
    passes = any(s.grants(PASS_ROLE) and (s.not_resources or any(
        _any_role(r) for r in s.resources)) for s in allowed)
    launches = sorted({action for s in allowed for action in LAUNCH_ACTIONS
                       if s.grants(action)})
    if passes and launches:
        yield (f"policy allows {PASS_ROLE} on any role together with {', '.join(launches)}: "
               "privilege escalation to any role")
    broad = [s for s in allowed if s.not_resources or any(_any_role(r) for r in s.resources)]
    raising = sorted({action for s in broad for action in SELF_ESCALATION if s.grants(action)
                      and not (action == RUN_COMMAND and _commands_on_tagged_nodes(s))})
    if raising:
        yield (f"policy allows {', '.join(raising)} on any resource: the holder can raise its "
               "own rights; name the one role, user or instance it may act on")


def _commands_on_tagged_nodes(statement: Statement) -> bool:
    """Cloud Assistant commands only on the instances a resource tag names (a StringEquals
    condition on acs:ResourceTag/<key>), or only on command objects (what RunCommand
    creates, which runs on no node by itself)."""
    if statement.not_resources or not statement.resources:
        return False
    if all(":command/" in r for r in statement.resources):
        return True
    return all(":instance/" in r for r in statement.resources) and any(
        key.lower().startswith("acs:resourcetag/") for key in condition_keys(statement.condition))


def any_account(principal: Any) -> list[str]:
    """The principal entries that admit any account (`*`, `acs:ram::*:root`, ...)."""
    if principal == "*" or (isinstance(principal, list) and "*" in principal):
        return ["*"]
    if not isinstance(principal, Mapping):
        return []
    return [entry for key, value in principal.items() if str(key).upper() == "RAM"
            for entry in strings(value)
            if entry == "*" or "*" in entry.split(":")[3:4]]


def _services(principal: Any) -> list[str]:
    if not isinstance(principal, Mapping):
        return []
    return [entry for key, value in principal.items() if str(key).lower() == "service"
            for entry in strings(value)]


def _federated(principal: Any) -> list[str]:
    if not isinstance(principal, Mapping):
        return []
    return [entry for key, value in principal.items() if str(key).lower() == "federated"
            for entry in strings(value)]


def condition_keys(condition: Any) -> set[str]:
    """The keys a statement's Condition tests (lower-case), whatever the operators."""
    if not isinstance(condition, Mapping):
        return set()
    return {str(key).lower() for block in condition.values() if isinstance(block, Mapping)
            for key in block}


OIDC_KEYS = ("oidc:sub", "oidc:aud")
"""What a trust policy for an OIDC provider (ACK RRSA, CI) must test: which identity
(the service account `system:serviceaccount:<ns>:<name>`, the CI repository) and for whom
the token was issued."""


def trust_policies(resources: Sequence[Resource], _: Mapping[str, Any],
                   __: Context) -> Iterator[tuple[Resource | None, str]]:
    """RAM roles trust no principal of any account, no cloud service the stack does not use
    (a service principal `x.aliyuncs.com` needs a resource of the SDK module `x`, or for ecs
    one of ecs, ess, cs), and no OIDC provider without conditions on oidc:sub and oidc:aud
    (else every service account of the cluster, every pipeline of the CI, may assume it)."""
    modules = {r.type.split(":")[1].split("/")[0] for r in resources if ":" in r.type}
    for role in (r for r in resources if r.type == t.RAM_ROLE):
        for s in statements_of(role):
            if not s.allows or not s.grants(ASSUME_ROLE):
                continue
            anyone = any_account(s.principal)
            if anyone:
                yield role, (f"trust policy lets {', '.join(anyone)} assume the role: any "
                             "account; name the accounts or services that need it")
            for service in _services(s.principal):
                if is_unknown(service):
                    continue
                name = service.lower().removesuffix(SERVICE_SUFFIX)
                if not modules & set(SERVICE_MODULES.get(name, (name,))):
                    yield role, (f"trust policy admits the service {service}, which no "
                                 "resource of this stack uses")
            providers = [p for p in _federated(s.principal) if "oidc-provider" in p.lower()]
            missing = [key for key in OIDC_KEYS if key not in condition_keys(s.condition)]
            if providers and missing and not contains_unknown(s.condition):
                yield role, (f"trust policy admits {', '.join(providers)} without a condition "
                             f"on {', '.join(missing)}: any identity of that provider may "
                             "assume the role; test oidc:sub (the service account) and "
                             "oidc:aud")


def named_accounts(principal: Any) -> list[str]:
    """The account ids of RAM principals (`acs:ram::123:root`, `123`, ...) that name one."""
    if not isinstance(principal, Mapping):
        return []
    found = []
    for key, value in principal.items():
        if str(key).upper() != "RAM":
            continue
        for entry in strings(value):
            account = entry.split(":")[3] if entry.startswith("acs:") and entry.count(":") >= 4 \
                else entry
            if account.isdigit():
                found.append(account)
    return found


def named_account_trust(resource: Resource, cfg: Mapping[str, Any],
                        _: Context) -> Iterator[str]:
    """Roles trusted by a named account not listed in `trustedAccounts`: every RAM identity
    that account allows may assume the role."""
    if resource.type != t.RAM_ROLE:
        return
    trusted = {str(a) for a in cfg["trustedAccounts"]}
    for s in statements_of(resource):
        if s.allows and s.grants(ASSUME_ROLE):
            for account in sorted(set(named_accounts(s.principal)) - trusted):
                yield (f"trust policy lets account {account} assume the role; list it in "
                       "trustedAccounts if it is yours or a partner's, and add a condition "
                       "(acs:MFAPresent, sts:ExternalId)")


def console_mfa(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Console logins require MFA: a ram.LoginProfile binds MFA (mfaBindRequired, default
    false); the account's ram.SecurityPreference enforces it (enforceMfaForLogin, default
    false)."""
    if resource.type == t.RAM_LOGIN_PROFILE:
        required = resource.props.get("mfaBindRequired", False)
        if not is_unknown(required) and required is not True:
            yield (f"user {resource.props.get('userName')} gets a console password without "
                   "MFA; set mfaBindRequired true")
    elif resource.type == t.RAM_SECURITY_PREFERENCE:
        enforced = resource.props.get("enforceMfaForLogin", False)
        if not is_unknown(enforced) and enforced is not True:
            yield "console logins are not required to use MFA; set enforceMfaForLogin true"


PASSWORD_POLICY = {"minimumPasswordLength": (14, 12), "maxLoginAttempts": (5, 5),
                   "maxLoginAttemps": (5, 5), "maxPasswordAge": (90, 0),
                   "passwordReusePrevention": (1, 0)}
"""Input -> (the bound, the provider default): length at least 14, at most 5 failed logins
(0 = never locked), passwords expire within 90 days (0 = never), at least one old
password remembered (0 = none). ram.PasswordPolicy spells maxLoginAttemps."""
PASSWORD_CLASSES = ("requireLowercaseCharacters", "requireUppercaseCharacters",
                    "requireNumbers", "requireSymbols")
"""Character classes a password must contain (each defaults to true)."""


def password_policy(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """The account password policy (ram.AccountPasswordPolicy, ram.PasswordPolicy) is
    strong: PASSWORD_POLICY bounds and every character class; left out, a field takes the
    provider default (length 12, no expiry, no reuse prevention: weak)."""
    if resource.type not in t.RAM_PASSWORD_POLICIES:
        return
    props = resource.props
    problems = []
    for key, (bound, default) in PASSWORD_POLICY.items():
        if key == "maxLoginAttemps" and resource.type != t.RAM_PASSWORD_POLICY:
            continue
        if key == "maxLoginAttempts" and resource.type == t.RAM_PASSWORD_POLICY:
            continue
        value = number(props.get(key, default))
        if value is None:
            continue
        if key == "minimumPasswordLength" and value < bound:
            problems.append(f"{key} {value:g} (at least {bound})")
        elif key in ("maxLoginAttempts", "maxLoginAttemps", "maxPasswordAge") and not (
                0 < value <= bound):
            problems.append(f"{key} {value:g} (1 to {bound})")
        elif key == "passwordReusePrevention" and value < bound:
            problems.append(f"{key} {value:g} (at least {bound})")
    problems += [f"{key} false" for key in PASSWORD_CLASSES if props.get(key, True) is False]
    if problems:
        yield f"weak password policy: {'; '.join(problems)}"


def user_policies(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Policies attach to groups and roles, not to single users (ram.UserPolicyAttachment):
    a user's rights then follow its group and leave with it."""
    if resource.type == t.RAM_POLICY_ATTACHMENTS[1]:
        yield (f"policy {resource.props.get('policyName')} is attached to user "
               f"{resource.props.get('userName')}; attach it to a group the user joins")


def access_keys(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """No long-lived RAM access keys: the secret lands in the state (in clear without
    pgpKey) and never expires."""
    if resource.type == t.RAM_ACCESS_KEY:
        user = resource.props.get("userName")
        yield (f"long-lived AccessKey for user {user}: its secret is kept in the state and "
               "never expires; use a RAM role (STS) instead")


TRUSTED_ACCOUNTS_SCHEMA = {
    "type": "array", "items": {"type": "string"},
    "description": "Alibaba Cloud account ids the stack may trust or share with (your own "
                   "included). Default none."}

IAM_RULES: tuple[Rule, ...] = (
    ResourceRule("policy-documents-readable", "Policy documents can be read and judged",
                 "security", "high", "Write the RAM, trust, bucket, key or project policy as a "
                 "plain JSON policy document (Statement list, a few levels deep).", readable,
                 concern="identity", reviews=frozenset(DOCUMENT_INPUTS)),
    ResourceRule("no-admin-policies", "RAM grants no service-wide actions on every resource",
                 "security", "critical", "Grant only the actions and resources the nodes need "
                 "(e.g. read one OSS bucket); no `svc:*` on `*`, no NotAction / NotResource "
                 "with Allow, no *FullAccess system policy.", admin_policies,
                 concern="identity", reviews=frozenset({t.RAM_POLICY, *t.RAM_POLICY_ATTACHMENTS}),
                 schema={"forbiddenSystemPolicies": {
                     "type": "array", "items": {"type": "string"},
                     "description": "System policies (names or patterns) never attached to a "
                                    "role, user or group. Default AdministratorAccess, "
                                    "*FullAccess."}},
                 defaults={"forbiddenSystemPolicies": ["AdministratorAccess", "*FullAccess"]}),
    ResourceRule("ram-no-privilege-escalation", "No policy lets its holder raise its own rights",
                 "security", "critical", "Limit ram:PassRole, policy and login management, "
                 "Cloud Assistant commands and sts:AssumeRole to the one role, user or node "
                 "they are for (acs:ram::<account>:role/<name>).", escalation,
                 concern="identity", reviews=frozenset({t.RAM_POLICY})),
    StackRule("ram-trust-policy", "Roles trust no account at large, only services the stack uses "
              "and OIDC identities named by condition", "security", "critical",
              "Set the trust policy's Principal to the service the role serves (e.g. "
              "ecs.aliyuncs.com) or to named accounts; for OIDC (RRSA) test oidc:sub and "
              "oidc:aud.", trust_policies, concern="identity", reviews=frozenset({t.RAM_ROLE})),
    ResourceRule("ram-named-account-trust", "Roles trust only accounts listed as trusted",
                 "security", "high", "List your own and partner accounts in trustedAccounts; "
                 "add a condition (sts:ExternalId, acs:MFAPresent) to cross-account trust.",
                 named_account_trust, concern="identity", reviews=frozenset({t.RAM_ROLE}),
                 enforcement="advisory",
                 note="advisory: the stack does not show which account is its own, so a named "
                      "account may be yours",
                 schema={"trustedAccounts": TRUSTED_ACCOUNTS_SCHEMA},
                 defaults={"trustedAccounts": []}),
    ResourceRule("console-mfa", "Console logins require MFA", "security", "high",
                 "Set mfaBindRequired true on ram.LoginProfile and enforceMfaForLogin true on "
                 "ram.SecurityPreference.", console_mfa, concern="identity",
                 reviews=frozenset({t.RAM_LOGIN_PROFILE, t.RAM_SECURITY_PREFERENCE})),
    ResourceRule("ram-password-policy", "The account password policy is strong", "security",
                 "medium", "Set minimumPasswordLength 14+, maxLoginAttempts 1-5, "
                 "maxPasswordAge 1-90, passwordReusePrevention 1+ and every require* true.",
                 password_policy, concern="identity", reviews=t.RAM_PASSWORD_POLICIES),
    ResourceRule("ram-policies-on-groups", "Policies attach to groups and roles, not users",
                 "security", "low", "Attach the policy to a RAM group and add the user to it.",
                 user_policies, concern="identity",
                 reviews=frozenset({t.RAM_POLICY_ATTACHMENTS[1]}), enforcement="advisory",
                 note="advisory: hygiene; the rights are the same, only harder to review"),
    ResourceRule("ram-no-access-keys", "No long-lived RAM access keys", "security", "medium",
                 "Use RAM roles (instance roles, RRSA, OIDC for CI) instead of access keys.",
                 access_keys, concern="identity", reviews=frozenset({t.RAM_ACCESS_KEY}),
                 enforcement="advisory",
                 note="advisory by default: some integrations outside Alibaba Cloud still need a "
                      "key; a reviewer should see it, not be blocked by it"),
)
