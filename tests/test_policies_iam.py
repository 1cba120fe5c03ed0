"""RAM rules judged on effective permissions: wildcard actions and resources in any
spelling, NotAction / NotResource, escalation, trust policies, access keys; documents read
safely (deep, long or malformed documents are findings, never crashes)."""

from __future__ import annotations

import json

import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Resource
from gpu_infra_policies.documents import MAX_DEPTH, nesting_depth

from .rule_helpers import messages, stack_messages


def policy(*statements: dict) -> Resource:
    return Resource(t.RAM_POLICY, {"policyDocument": json.dumps(
        {"Version": "1", "Statement": list(statements)})})


def allow(action, resource="*", **more) -> dict:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


@pytest.mark.parametrize("action, resource", [
    ("*", "*"), ("ram:*", "*"), ("*:*", "*"), (["oss:GetObject", "*"], "*"), ("ecs:*", "*"),
    ("ECS:*", "*"), ("oss:**", ["acs:oss:*:*:ckpt", "*"]), ("*", "acs:*:*:*:*"),
    ("ecs:*", "acs:ecs:*:*:*"), ("ram:*", "acs:ram:*:123456789012:*"),
])
def test_admin_policy_fires(action, resource):
    found = messages("no-admin-policies", policy(allow(action, resource)))
    assert len(found) == 1 and found[0].startswith("policy allows [")
    assert "on every resource (" in found[0]


def test_not_action_and_not_resource_with_allow():
    assert messages("no-admin-policies", policy(
        {"Effect": "Allow", "NotAction": "ram:*", "Resource": "*"})) == [
        "policy allows every action except ['ram:*'] (Allow with NotAction)"]
    assert messages("no-admin-policies", policy(
        {"Effect": "Allow", "Action": "oss:GetObject", "NotResource": "acs:oss:*:*:x/*"})) == [
        "policy allows ['oss:GetObject'] on every resource except ['acs:oss:*:*:x/*'] "
        "(Allow with NotResource)"]
    assert messages("no-admin-policies", policy(
        {"Effect": "Deny", "NotAction": "ram:*", "Resource": "*"})) == []


@pytest.mark.parametrize("statement", [
    allow("oss:GetObject"), allow("ecs:Describe*"), allow("*", "acs:oss:*:*:ckpt/*"),
    {"Effect": "Deny", "Action": "*", "Resource": "*"},
])
def test_admin_policy_quiet(statement):
    assert messages("no-admin-policies", policy(statement)) == []
    assert messages("no-admin-policies", Resource(t.RAM_POLICY, {"policyDocument": UNKNOWN})) \
        == []


def test_admin_policy_deprecated_statements_and_attachments():
    old = Resource(t.RAM_POLICY, {"statements": [
        {"effect": "Allow", "actions": ["*"], "resources": ["*"]}]})
    assert messages("no-admin-policies", old) == ["policy allows ['*'] on every resource (*)"]
    for token, key, who in ((t.RAM_POLICY_ATTACHMENTS[0], "roleName", "role"),
                            (t.RAM_POLICY_ATTACHMENTS[1], "userName", "user"),
                            (t.RAM_POLICY_ATTACHMENTS[2], "groupName", "group")):
        attach = Resource(token, {"policyType": "System", key: "r",
                                  "policyName": "AdministratorAccess"})
        assert messages("no-admin-policies", attach) == [
            f"{who} r gets the admin-level system policy AdministratorAccess"]
    custom = Resource(t.RAM_ROLE_POLICY_ATTACHMENT, {"policyType": "Custom", "roleName": "r",
                                                     "policyName": "AdministratorAccess"})
    assert messages("no-admin-policies", custom) == []


@pytest.mark.parametrize("statements", [
    [allow("ram:PassRole"), allow("ecs:RunInstances")],
    [allow(["ram:PassRole", "ecs:CreateInstance"])],
    [allow("ram:Pass*", "acs:ram::123456789012:role/*"), allow("ess:CreateScalingConfiguration")],
    [allow("ram:*"), allow("ecs:Run*", "acs:ecs:cn-hangzhou:123456789012:instance/*")],
    [{"Effect": "Allow", "NotAction": "oss:*", "Resource": "*"}],
])
def test_privilege_escalation_fires(statements):
    found, *raising = messages("ram-no-privilege-escalation", policy(*statements))
    assert all(m.endswith("can raise its own rights; name the one role, user or instance it "
                          "may act on") for m in raising)
    assert found.startswith("policy allows ram:PassRole on any role together with ")
    assert found.endswith(": privilege escalation to any role")


@pytest.mark.parametrize("statements", [
    [allow("ram:PassRole", "acs:ram::123456789012:role/gpu-node"), allow("ecs:RunInstances")],
    [allow("ram:PassRole")],
    [allow("ecs:RunInstances")],
    [allow("ram:PassRole"), {"Effect": "Deny", "Action": "ecs:RunInstances", "Resource": "*"}],
])
def test_privilege_escalation_quiet(statements):
    assert messages("ram-no-privilege-escalation", policy(*statements)) == []


TAGGED = {"StringEquals": {"acs:ResourceTag/GpuFleet": "r01-gpu"}}


@pytest.mark.parametrize("statements, flagged", [
    ([allow("ecs:RunCommand", "acs:ecs:cn-hangzhou:1:instance/*", Condition=TAGGED),
      allow("ecs:RunCommand", "acs:ecs:cn-hangzhou:1:command/*")], False),
    ([allow("ecs:RunCommand", "acs:ecs:cn-hangzhou:1:instance/*")], True),
    ([allow("ecs:RunCommand", ["acs:ecs:cn-hangzhou:1:instance/*",
                               "acs:ecs:cn-hangzhou:1:command/*"], Condition=TAGGED)], True),
    ([allow("ecs:RunCommand")], True),
])
def test_commands_only_on_the_fleets_tagged_instances_are_scoped(statements, flagged):
    found = messages("ram-no-privilege-escalation", policy(*statements))
    assert bool(found) is flagged, found


def role(principal, name: str = "role") -> Resource:
    return Resource(t.RAM_ROLE, {"assumeRolePolicyDocument": json.dumps({
        "Version": "1", "Statement": [{"Action": "sts:AssumeRole", "Effect": "Allow",
                                       "Principal": principal}]})}, name)


INSTANCE = Resource(t.INSTANCE, {}, "node")


@pytest.mark.parametrize("principal", [{"RAM": ["acs:ram::*:root"]}, {"RAM": "*"}, "*",
                                       {"RAM": ["acs:ram::123456789012:root", "*"]}])
def test_trust_policy_any_account(principal):
    [(name, found)] = stack_messages("ram-trust-policy", [role(principal), INSTANCE])
    assert name == "role" and found.endswith("assume the role: any account; name the "
                                             "accounts or services that need it")


def test_trust_policy_services_the_stack_uses():
    fc = role({"Service": ["fc.aliyuncs.com"]})
    assert stack_messages("ram-trust-policy", [fc, INSTANCE]) == [
        ("role", "trust policy admits the service fc.aliyuncs.com, which no resource of this "
                 "stack uses")]
    ecs = role({"Service": ["ecs.aliyuncs.com"]})
    scaling = Resource(t.SCALING_GROUP, {}, "group")
    for resources in ([ecs, INSTANCE], [ecs, scaling],
                      [role({"RAM": ["acs:ram::123456789012:root"]}), INSTANCE]):
        assert stack_messages("ram-trust-policy", resources) == []
    assert len(stack_messages("ram-trust-policy", [ecs])) == 1


def test_access_keys_are_advisory_findings():
    assert messages("ram-no-access-keys", Resource(t.RAM_ACCESS_KEY, {"userName": "ci"})) == [
        "long-lived AccessKey for user ci: its secret is kept in the state and never expires; "
        "use a RAM role (STS) instead"]
    assert messages("ram-no-access-keys", Resource(t.RAM_ROLE, {})) == []


def nested(depth: int) -> str:
    """A 3 kB-ish policy whose condition nests `depth` levels, with an Action * in it."""
    condition = "[" * depth + "]" * depth
    return ('{"Version":"1","Statement":[{"Effect":"Allow","Action":"*","Resource":"*",'
            f'"Condition":{{"StringEquals":{{"x":{condition}}}}}}}]}}')


def test_deeply_nested_document_is_a_finding_not_a_crash():
    document = nested(1500)
    assert len(document) > 3000 and nesting_depth(document) > MAX_DEPTH
    deep = Resource(t.RAM_POLICY, {"policyDocument": document})
    [found] = messages("policy-documents-readable", deep)
    assert found.startswith("policyDocument nests 1505 levels deep (more than 32); it cannot")
    assert messages("no-admin-policies", deep) == []  # nothing to judge, but no crash
    # the same Action * in a shallow document is judged
    assert messages("no-admin-policies", Resource(t.RAM_POLICY,
                                                   {"policyDocument": nested(3)}))


@pytest.mark.parametrize("token, props, expected", [
    (t.RAM_POLICY, {"policyDocument": "{not json"}, "policyDocument is not valid JSON ("),
    (t.RAM_POLICY, {"policyDocument": '["a"]'}, "policyDocument is not a JSON object"),
    (t.RAM_POLICY, {"policyDocument": '{"Version": "1"}'},
     "policyDocument has no Statement list of objects"),
    (t.RAM_POLICY, {"policyDocument": " " * 70000}, "is 70000 characters long"),
    (t.RAM_ROLE, {"assumeRolePolicyDocument": '{"Statement": "x"}'},
     "assumeRolePolicyDocument has no Statement"),
    (t.BUCKET_POLICY, {"policy": "["}, "policy is not valid JSON"),
])
def test_unreadable_documents(token, props, expected):
    [found] = messages("policy-documents-readable", Resource(token, props))
    assert expected in found


def test_readable_documents_are_quiet():
    assert messages("policy-documents-readable", policy(allow("oss:GetObject"))) == []
    obj = Resource(t.RAM_POLICY, {"policyDocument": {"Statement": [allow("*")]}})
    assert messages("policy-documents-readable", obj) == []
    assert messages("no-admin-policies", obj)
    assert messages("policy-documents-readable", Resource(t.RAM_POLICY, {
        "policyDocument": UNKNOWN})) == []
