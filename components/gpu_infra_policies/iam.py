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
    is_unknown,
)
from gpu_infra_policies.documents import (
    Statement,
    UnreadableDocument,
    read_document,
    statement,
    strings,
)

DOCUMENT_INPUTS: dict[str, tuple[str, ...]] = {
    t.RAM_POLICY: ("policyDocument", "document"),
    t.RAM_ROLE: ("assumeRolePolicyDocument", "document"),
    t.BUCKET_POLICY: ("policy",),
    t.BUCKET: ("policy",),
}
"""Types holding a policy document, and the inputs (current first, deprecated after)."""
LAUNCH_ACTIONS = ("ecs:RunInstances", "ecs:CreateInstance", "ess:CreateScalingConfiguration",
                  "ess:ModifyScalingConfiguration", "ecs:CreateLaunchTemplate",
                  "ecs:CreateLaunchTemplateVersion", "cs:CreateClusterNodePool",
                  "cs:ModifyClusterNodePool")
"""Actions that start nodes under a role of the caller's choosing (with ram:PassRole)."""
PASS_ROLE = "ram:PassRole"
ASSUME_ROLE = "sts:AssumeRole"
SERVICE_SUFFIX = ".aliyuncs.com"
SERVICE_MODULES = {"ecs": ("ecs", "ess", "cs"), "ess": ("ess",), "cs": ("cs",)}
"""Trusted service (principal `<name>.aliyuncs.com`) -> the SDK modules whose resources use
it; any other service maps to the module of its own name."""


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


def wildcard_resource(resource: str) -> bool:
    """`*`, or an ARN whose resource part is `*` (`acs:*:*:*:*`, `acs:ecs:*:*:*`)."""
    parts = resource.split(":", 4)
    return resource == "*" or (len(parts) == 5 and parts[0] == "acs" and parts[4] == "*")


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
    (`*`, `acs:*:*:*:*`), Allow with NotAction or NotResource; attachments of admin-level
    system policies to roles, users or groups."""
    props = resource.props
    if resource.type == t.RAM_POLICY:
        yield from _grants(resource)
    elif resource.type in t.RAM_POLICY_ATTACHMENTS:
        policy = props.get("policyName")
        if props.get("policyType") == "System" and policy in cfg["forbiddenSystemPolicies"]:
            who = next((f"{kind} {props[key]}" for kind, key in (
                ("role", "roleName"), ("user", "userName"), ("group", "groupName"))
                if key in props), "principal")
            yield f"{who} gets the admin-level system policy {policy}"


def _any_role(resource_pattern: str) -> bool:
    """True if the pattern matches roles it does not name (a wildcard in the role part)."""
    return "*" in resource_pattern.rpartition(":")[2] or resource_pattern == "*"


def escalation(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """A RAM policy that lets its holder pass any role (ram:PassRole on a wildcard) and
    start nodes (ecs:RunInstances / CreateInstance, ESS scaling configurations, launch
    templates, ACK node pools): the holder can launch a node under a stronger role and
    read its credentials."""
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


def trust_policies(resources: Sequence[Resource], _: Mapping[str, Any],
                   __: Context) -> Iterator[tuple[Resource | None, str]]:
    """RAM roles trust no principal of any account, and no cloud service the stack does not
    use (a service principal `x.aliyuncs.com` needs a resource of the SDK module `x`, or
    for ecs one of ecs, ess, cs)."""
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


def access_keys(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """No long-lived RAM access keys: the secret lands in the state (in clear without
    pgpKey) and never expires."""
    if resource.type == t.RAM_ACCESS_KEY:
        user = resource.props.get("userName")
        yield (f"long-lived AccessKey for user {user}: its secret is kept in the state and "
               "never expires; use a RAM role (STS) instead")


IAM_RULES: tuple[Rule, ...] = (
    ResourceRule("policy-documents-readable", "Policy documents can be read and judged", "security",
                 "high", "Write the RAM, trust or bucket policy as a plain JSON policy document "
                 "(Statement list, a few levels deep).", readable, concern="identity",
                 reviews=frozenset(DOCUMENT_INPUTS)),
    ResourceRule("no-admin-policies", "RAM grants no service-wide actions on every resource",
                 "security", "critical", "Grant only the actions and resources the nodes need "
                 "(e.g. read one OSS bucket); no `svc:*` on `*`, no NotAction / NotResource "
                 "with Allow.",
                 admin_policies, concern="identity",
                 reviews=frozenset({t.RAM_POLICY, *t.RAM_POLICY_ATTACHMENTS}),
                 schema={"forbiddenSystemPolicies": {
                     "type": "array", "items": {"type": "string"},
                     "description": "System policies never attached to a role, user or group. "
                                    "Default AdministratorAccess, AliyunRAMFullAccess."}},
                 defaults={"forbiddenSystemPolicies": ["AdministratorAccess",
                                                       "AliyunRAMFullAccess"]}),
    ResourceRule("ram-no-privilege-escalation", "No policy both passes any role and starts nodes",
                 "security", "critical", "Limit ram:PassRole to the one role the nodes use "
                 "(acs:ram::<account>:role/<name>) or drop the node-launching actions.",
                 escalation, concern="identity",
                 reviews=frozenset({t.RAM_POLICY})),
    StackRule("ram-trust-policy", "Roles trust only named accounts and services the stack uses",
              "security", "critical", "Set the trust policy's Principal to the service the role "
              "serves (e.g. ecs.aliyuncs.com) or to named accounts.", trust_policies,
                 concern="identity",
                 reviews=frozenset({t.RAM_ROLE})),
    ResourceRule("ram-no-access-keys", "No long-lived RAM access keys", "security", "medium",
                 "Use RAM roles (instance roles, OIDC for CI) instead of access keys.", access_keys,
                 concern="identity",
                 reviews=frozenset({t.RAM_ACCESS_KEY}),
                 enforcement="advisory",
                 note="advisory by default: some integrations outside Alibaba Cloud still need a "
                      "key; a reviewer should see it, not be blocked by it"),
)
