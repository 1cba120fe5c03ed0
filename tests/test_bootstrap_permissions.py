"""The node role's grant for the bootstrap: exactly the calls the nodes make, scoped to the
fleet (its tag, its scaling group), in the region and account of the stack."""

from __future__ import annotations

import json

from gpu_infra.blocks.bootstrap import trust_names
from gpu_infra.blocks.bootstrap.permissions import bootstrap_policy_document
from gpu_infra.testing import ACCOUNT_ID

from .shipped import shipped_plan

POLICY = "alicloud:ram/policy:Policy"


def bootstrap_policy(stack: str) -> tuple[dict, object]:
    plan = shipped_plan(stack)
    policy = next(p for p in plan.by_type(POLICY) if p.name.endswith("-bootstrap-policy"))
    return json.loads(policy.inputs["policyDocument"]), plan


def actions(document: dict) -> dict[str, list[str]]:
    return {action: statement["Resource"] for statement in document["Statement"]
            for action in statement["Action"]}


def test_training_nodes_may_tag_their_fleet_list_it_and_only_read_their_trust():
    document, plan = bootstrap_policy("training-prod")
    granted = actions(document)
    instances = f"acs:ecs:cn-beijing:{ACCOUNT_ID}:instance/*"
    names = {p.inputs["secretParameterName"]
             for p in plan.by_type("alicloud:oos/secretParameter:SecretParameter")}
    [node_list] = [p.inputs["parameterName"]
                   for p in plan.by_type("alicloud:oos/parameter:Parameter")]
    oos = f"acs:oos:cn-beijing:{ACCOUNT_ID}"
    registry = plan.one("alicloud:cr/registryEnterpriseInstance:RegistryEnterpriseInstance")
    granted["oos:GetSecretParameter"].sort()
    assert granted == {
        "ecs:TagResources": [instances], "ecs:DescribeInstances": [instances],
        "cms:PutCustomEvent": [f"acs:cms:cn-beijing:{ACCOUNT_ID}:*"],
        "oos:GetSecretParameter": sorted(f"{oos}:secretparameter/{n}" for n in names),
        "oos:GetParameter": [f"{oos}:parameter/{node_list}", f"{oos}:parameter/{node_list}-*"],
        "kms:GetSecretValue": [f"acs:kms:cn-beijing:{ACCOUNT_ID}:secret/*"],
        # the registry's login token (ACR scopes it to no resource) and pulls from the
        # stack's two namespaces of its Enterprise instance only
        "cr:GetAuthorizationToken": ["*"],
        "cr:PullRepository": [f"acs:cr:cn-beijing:{ACCOUNT_ID}:repository/{registry.id}/{space}/*"
                              for space in ("llm-pretrain", "llm-pretrain-mirror")]}
    assert not [a for a in granted if a.startswith("oos:") and not a.startswith("oos:Get")]
    tagging = document["Statement"][0]
    assert tagging["Condition"] == {
        "StringEquals": {"acs:ResourceTag/GpuFleet": "llm-pretrain-gpu"}}
    attachment = next(a for a in plan.by_type("alicloud:ram/rolePolicyAttachment:"
                                              "RolePolicyAttachment")
                      if a.name.endswith("-bootstrap-policy-attachment"))
    role = plan.one("alicloud:ram/role:Role")
    assert attachment.inputs["roleName"] == role.inputs["roleName"]


def test_scaling_nodes_may_finish_only_their_groups_lifecycle_actions():
    document, plan = bootstrap_policy("inference-prod")
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    granted = actions(document)
    assert set(granted) == {"ecs:TagResources", "ecs:DescribeInstances", "cms:PutCustomEvent",
                            "ess:DescribeScalingActivities", "ess:DescribeLifecycleActions",
                            "ess:CompleteLifecycleAction", "ess:SetInstanceHealth",
                            "cr:GetAuthorizationToken", "cr:PullRepository"}
    assert granted["ess:CompleteLifecycleAction"] == [
        f"acs:ess:cn-hangzhou:{ACCOUNT_ID}:scalinggroup/{group.id}"]
    assert not [a for a in granted if a.startswith("oos:")]  # no trust outside training


def test_no_statement_grants_everything():
    document = json.loads(bootstrap_policy_document(
        "cn-hangzhou", "1", "f", trust=trust_names("f", None), scaling_group_id="asg-1"))
    for statement in document["Statement"]:
        assert "*" not in statement["Resource"] and statement["Effect"] == "Allow"
        assert all(not action.endswith("*") for action in statement["Action"])
