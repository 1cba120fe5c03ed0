"""What the bootstrap may do in the cloud, granted to the node role for one fleet only: tag
its own instance (health), send its readiness event, read instances (a training node's peers,
a scaling node's batch), read the fleet's trust (training: the SSH keys and the node list,
blocks.compute.trust) and finish its own scale-out lifecycle action (scaling fleets: answer
it, set a failed batch member Unhealthy). The role may write none of the trust parameters: no
oos:Update*, Create* or Delete* action is granted, and no ecs:ModifyInstanceAttribute.

Each grant comes from gpu_infra_facts.node_apis (its row names the actions the API
reference asks of the caller and their ARN templates); this module only scopes them: the
tag only on instances carrying this fleet's GpuFleet tag (`acs:ResourceTag` condition; that
ECS honours it for TagResources is UNCONFIRMED), so a node can retag its peers' health but
not tag another instance into the fleet; the two key parameters (with KMS GetSecretValue,
which GetSecretParameter's reference asks for) and the node list's pages by name; the ESS
actions on this fleet's scaling group only; the registry's login token with pulls from the
stack's own namespaces only. Under the stack's KMS key the instance role's
kms:Decrypt on it (identity.InstanceRole) decrypts too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import NodeTrustNames
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy
from gpu_infra_facts.node_apis import allow_statements

TAG_CALLS = ("TagResources",)
PEER_CALLS = ("DescribeInstances",)
"""Reading instances: a training node's peers, a scaling node's batch health."""
EVENT_CALLS = ("PutCustomEvent",)
"""The node's readiness event (gpu-infra-api event)."""
READINESS_CALLS = ("DescribeScalingActivities", "DescribeLifecycleActions",
                   "CompleteLifecycleAction", "SetInstanceHealth")
REGISTRY_CALLS = ("GetAuthorizationToken",)
"""gpu-infra-pull's login to the stack's registry, and the pulls its token allows."""


def bootstrap_policy_document(region: str, account: str, fleet: str, *,
                              scaling_group_id: str | None = None,
                              trust: NodeTrustNames | None = None,
                              registry_scopes: Sequence[str] = ()) -> str:
    """The RAM policy document of one fleet's bootstrap (its grants from
    gpu_infra_facts.node_apis); `trust`: a training fleet's parameters (read only);
    `registry_scopes`: the registry namespaces the nodes pull from (blocks.registry
    `pull_scopes`; none: no registry grant)."""
    statements = [
        *allow_statements("ecs", TAG_CALLS, region=region, account=account, condition={
            "StringEquals": {f"acs:ResourceTag/{FLEET_TAG_KEY}": fleet}}),
        *allow_statements("cms", EVENT_CALLS, region=region, account=account)]
    if trust is not None or scaling_group_id is not None:
        statements += allow_statements("ecs", PEER_CALLS, region=region, account=account)
    if trust is not None:
        statements += [
            *allow_statements("oos", ["GetSecretParameter"], region=region, account=account,
                              names=[trust.user_key, trust.host_key]),
            *allow_statements("oos", ["GetParameter"], region=region, account=account,
                              names=[trust.node_list, f"{trust.node_list}-*"])]
    if scaling_group_id is not None:
        statements += allow_statements("ess", READINESS_CALLS, region=region, account=account,
                                       names=[scaling_group_id])
    if registry_scopes:
        statements += allow_statements("cr", REGISTRY_CALLS, region=region, account=account,
                                       names=registry_scopes)
    return json.dumps({"Version": RAM_POLICY_VERSION, "Statement": statements})


def grant_bootstrap(name: str, *, role_name: pulumi.Input[str], account: pulumi.Input[str],
                    conventions: Conventions, parent: pulumi.Resource,
                    scaling_group_id: pulumi.Input[str] | None = None,
                    trust: NodeTrustNames | None = None,
                    registry_scopes: pulumi.Input[Sequence[str]] | None = None,
                    ) -> tuple[alicloud.ram.Policy, alicloud.ram.RolePolicyAttachment]:
    """The bootstrap's policy for fleet `name` on `role_name`, and its attachment."""
    document = pulumi.Output.all(account, scaling_group_id, registry_scopes).apply(
        lambda values: bootstrap_policy_document(conventions.region, values[0], name,
                                                 scaling_group_id=values[1], trust=trust,
                                                 registry_scopes=values[2] or ()))
    return role_policy(
        child_name(name, "bootstrap-policy"), role_name=role_name, document=document,
        description="Node bootstrap of one GPU fleet: own tags, peers, scale-out readiness",
        conventions=conventions, parent=parent)
