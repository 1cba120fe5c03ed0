"""What the bootstrap may do in the cloud, granted to the node role for one fleet only: tag
its own instance (health, public SSH keys), list the fleet's nodes (training peers), and
finish its own scale-out lifecycle action (scaling fleets).

Scope: ecs:TagResources only on instances carrying this fleet's GpuFleet tag
(`acs:ResourceTag` condition; that ECS honours it for TagResources is UNCONFIRMED);
ecs:DescribeInstances is a read that ECS authorizes per region and account, not per
instance; the ESS actions only on this fleet's scaling group
(`acs:ess:<region>:<account>:scalinggroup/<id>`, the ESS RAM resource format).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy

TAG_ACTIONS = ("ecs:TagResources",)
PEER_ACTIONS = ("ecs:DescribeInstances",)
READINESS_ACTIONS = ("ess:DescribeScalingActivities", "ess:DescribeLifecycleActions",
                     "ess:CompleteLifecycleAction")


def bootstrap_policy_document(region: str, account: str, fleet: str, *,
                              scaling_group_id: str | None = None, peers: bool = False) -> str:
    """The RAM policy document of one fleet's bootstrap."""
    instances = f"acs:ecs:{region}:{account}:instance/*"
    statements: list[dict[str, object]] = [
        {"Effect": "Allow", "Action": list(TAG_ACTIONS), "Resource": [instances],
         "Condition": {"StringEquals": {f"acs:ResourceTag/{FLEET_TAG_KEY}": fleet}}}]
    if peers:
        statements.append({"Effect": "Allow", "Action": list(PEER_ACTIONS),
                           "Resource": [instances]})
    if scaling_group_id is not None:
        statements.append({
            "Effect": "Allow", "Action": list(READINESS_ACTIONS),
            "Resource": [f"acs:ess:{region}:{account}:scalinggroup/{scaling_group_id}"]})
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})


def grant_bootstrap(name: str, *, role_name: pulumi.Input[str], account: pulumi.Input[str],
                    conventions: Conventions, parent: pulumi.Resource,
                    scaling_group_id: pulumi.Input[str] | None = None, peers: bool = False,
                    ) -> tuple[alicloud.ram.Policy, alicloud.ram.RolePolicyAttachment]:
    """The bootstrap's policy for fleet `name` on `role_name`, and its attachment."""
    document = pulumi.Output.all(account, scaling_group_id).apply(
        lambda values: bootstrap_policy_document(conventions.region, values[0], name,
                                                 scaling_group_id=values[1], peers=peers))
    return role_policy(
        child_name(name, "bootstrap-policy"), role_name=role_name, document=document,
        description="Node bootstrap of one GPU fleet: own tags, peers, scale-out readiness",
        conventions=conventions, parent=parent)
