"""What the bootstrap may do in the cloud, granted to the node role for one fleet only: tag
its own instance (health), send its readiness event, read instances (a training node's peers,
a scaling node's batch), read the fleet's trust (training: the SSH keys and the node list,
blocks.compute.trust) and finish its own scale-out lifecycle action (scaling fleets: answer
it, set a failed batch member Unhealthy). The role may write none of the trust parameters: no
oos:Update*, Create* or Delete* action is granted, and no ecs:ModifyInstanceAttribute.

Scope: ecs:TagResources only on instances carrying this fleet's GpuFleet tag
(`acs:ResourceTag` condition; that ECS honours it for TagResources is UNCONFIRMED), so a node
can retag its peers' health but not tag another instance into the fleet;
ecs:DescribeInstances is a read that ECS authorizes per region and account, not per
instance; cms:PutCustomEvent on the account's CloudMonitor in the region (custom events have
no resource of their own; UNCONFIRMED that RAM takes a narrower ARN than
`acs:cms:<region>:<account>:*`); oos:GetSecretParameter on the two key parameters and
oos:GetParameter on the node list's pages (`acs:oos:<region>:<account>:secretparameter/
<name>` and `parameter/<name>`, the OOS RAM resource types of its API reference; the exact
ARN form is UNCONFIRMED). Decrypting needs no grant of its own under OOS's default key
(GetSecretParameter's RAM table lists no dependent action) and, under the stack's key, the
instance role's kms:Decrypt on it (identity.InstanceRole). The ESS actions only on this
fleet's scaling group (`acs:ess:<region>:<account>:scalinggroup/<id>`, the ESS RAM resource
format).
"""

from __future__ import annotations

import json

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import NodeTrustNames
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy

TAG_ACTIONS = ("ecs:TagResources",)
PEER_ACTIONS = ("ecs:DescribeInstances",)
"""Reading instances: a training node's peers, a scaling node's batch health."""
EVENT_ACTIONS = ("cms:PutCustomEvent",)
"""The node's readiness event (gpu-infra-api event)."""
TRUST_KEY_ACTIONS = ("oos:GetSecretParameter",)
NODE_LIST_ACTIONS = ("oos:GetParameter",)
READINESS_ACTIONS = ("ess:DescribeScalingActivities", "ess:DescribeLifecycleActions",
                     "ess:CompleteLifecycleAction", "ess:SetInstanceHealth")


def bootstrap_policy_document(region: str, account: str, fleet: str, *,
                              scaling_group_id: str | None = None,
                              trust: NodeTrustNames | None = None) -> str:
    """The RAM policy document of one fleet's bootstrap; `trust`: a training fleet's
    parameters (read only)."""
    instances = f"acs:ecs:{region}:{account}:instance/*"
    oos = f"acs:oos:{region}:{account}"
    statements: list[dict[str, object]] = [
        {"Effect": "Allow", "Action": list(TAG_ACTIONS), "Resource": [instances],
         "Condition": {"StringEquals": {f"acs:ResourceTag/{FLEET_TAG_KEY}": fleet}}},
        {"Effect": "Allow", "Action": list(EVENT_ACTIONS),
         "Resource": [f"acs:cms:{region}:{account}:*"]}]
    if trust is not None or scaling_group_id is not None:
        statements.append({"Effect": "Allow", "Action": list(PEER_ACTIONS),
                           "Resource": [instances]})
    if trust is not None:
        statements += [
            {"Effect": "Allow", "Action": list(TRUST_KEY_ACTIONS),
             "Resource": [f"{oos}:secretparameter/{trust.user_key}",
                          f"{oos}:secretparameter/{trust.host_key}"]},
            {"Effect": "Allow", "Action": list(NODE_LIST_ACTIONS),
             "Resource": [f"{oos}:parameter/{trust.node_list}",
                          f"{oos}:parameter/{trust.node_list}-*"]}]
    if scaling_group_id is not None:
        statements.append({
            "Effect": "Allow", "Action": list(READINESS_ACTIONS),
            "Resource": [f"acs:ess:{region}:{account}:scalinggroup/{scaling_group_id}"]})
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})


def grant_bootstrap(name: str, *, role_name: pulumi.Input[str], account: pulumi.Input[str],
                    conventions: Conventions, parent: pulumi.Resource,
                    scaling_group_id: pulumi.Input[str] | None = None,
                    trust: NodeTrustNames | None = None,
                    ) -> tuple[alicloud.ram.Policy, alicloud.ram.RolePolicyAttachment]:
    """The bootstrap's policy for fleet `name` on `role_name`, and its attachment."""
    document = pulumi.Output.all(account, scaling_group_id).apply(
        lambda values: bootstrap_policy_document(conventions.region, values[0], name,
                                                 scaling_group_id=values[1], trust=trust))
    return role_policy(
        child_name(name, "bootstrap-policy"), role_name=role_name, document=document,
        description="Node bootstrap of one GPU fleet: own tags, peers, scale-out readiness",
        conventions=conventions, parent=parent)
