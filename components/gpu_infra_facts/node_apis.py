"""Every cloud API the node code calls (gpu-infra-api and the node tools, blocks/bootstrap/
steps) and the fleet's job workers, with what RAM must allow the caller: the operation's own
action and the dependent actions its API reference names, each on the resource its RAM table
gives. The node role's policies are generated from this table (blocks.bootstrap.permissions,
blocks.gpu_health, blocks.compute.fleet_ops); tests/test_node_permissions.py finds every call
in the node code and checks that it has its row here.

Resource templates take `{region}`, `{account}` and `{name}` (the one resource the policy
scopes the grant to; a template without `{name}` is the same for every name).

Sources, the RAM authorization table of each API reference (alibabacloud.com/help/en/...):
ECS TagResources and DescribeInstances (ecs 2014-05-26: resource type instance,
`acs:ecs:{regionId}:{accountId}:instance/{instanceId}`); ESS DescribeScalingActivities,
DescribeLifecycleActions, CompleteLifecycleAction, SetInstanceHealth (ess 2014-08-28:
scalinggroup, `acs:ess:{regionId}:{accountId}:scalinggroup/{scalingGroupId}`); CloudMonitor
PutCustomEvent, PutCustomMetric, DescribeMonitorGroups (cms 2019-01-01: PutCustomMetric and
DescribeMonitorGroups "All Resources"; PutCustomEvent scoped to the account's CloudMonitor in
the region, UNCONFIRMED that RAM takes a narrower ARN); OOS GetParameter and
GetSecretParameter (oos 2019-06-01: `acs:oos:{regionId}:{accountId}:parameter/{name}` and
`secretparameter/{name}`; GetSecretParameter's reference opens "ensure that you have the
permissions to call the GetSecretValue API operation of KMS", whose resource type is
`acs:kms:{regionId}:{accountId}:secret/{secretName}`: OOS keeps the secret under a name of
its own, so the grant covers the region's secrets, UNCONFIRMED which secret ARN OOS checks);
OSS GetObject and PutObject (`acs:oss:*:{account}:{bucket}/{object}`; a render node writes its
frames to the outputs bucket); ACR GetAuthorizationToken (cr 2018-12-01: "all resources";
the temporary password it returns has the STS token's rights, so the pulls it logs in for need
cr:PullRepository on the repositories, ACR's RAM resource
`acs:cr:{regionId}:{accountId}:repository/{instanceId}/{namespace}/{repository}`, UNCONFIRMED
beyond the ACR RAM reference); MNS ReceiveMessage, DeleteMessage,
ChangeMessageVisibility (`acs:mns:{regionId}:{accountId}:/queues/{queueName}/messages`).
Instance metadata (100.100.100.200) needs no RAM grant and has no row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Grant:
    """One RAM action on resources of one ARN template."""

    action: str
    resource: str


@dataclass(frozen=True)
class NodeApi:
    """One operation of one service and every grant its caller needs."""

    service: str
    """The service code the node code names it by: ecs, ess, cms, oos, oss, mns, cr."""
    operation: str
    grants: tuple[Grant, ...]


def _own(service: str, operation: str, resource: str, *extra: Grant) -> NodeApi:
    """A row whose first grant is `<service>:<operation>` on `resource`."""
    return NodeApi(service, operation, (Grant(f"{service}:{operation}", resource), *extra))


INSTANCE = "acs:ecs:{region}:{account}:instance/*"
SCALING_GROUP = "acs:ess:{region}:{account}:scalinggroup/{name}"
QUEUE_MESSAGES = "acs:mns:{region}:{account}:/queues/{name}/messages"
NODE_APIS: tuple[NodeApi, ...] = (
    _own("ecs", "TagResources", INSTANCE),
    _own("ecs", "DescribeInstances", INSTANCE),
    *(_own("ess", operation, SCALING_GROUP) for operation in (
        "DescribeScalingActivities", "DescribeLifecycleActions", "CompleteLifecycleAction",
        "SetInstanceHealth")),
    _own("cms", "PutCustomEvent", "acs:cms:{region}:{account}:*"),
    _own("cms", "PutCustomMetric", "*"),
    _own("cms", "DescribeMonitorGroups", "*"),
    _own("oos", "GetParameter", "acs:oos:{region}:{account}:parameter/{name}"),
    _own("oos", "GetSecretParameter", "acs:oos:{region}:{account}:secretparameter/{name}",
         Grant("kms:GetSecretValue", "acs:kms:{region}:{account}:secret/*")),
    _own("oss", "GetObject", "acs:oss:*:{account}:{name}/*"),
    _own("oss", "PutObject", "acs:oss:*:{account}:{name}/*"),
    *(_own("mns", operation, QUEUE_MESSAGES) for operation in (
        "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility")),
    _own("cr", "GetAuthorizationToken", "*",
         Grant("cr:PullRepository", "acs:cr:{region}:{account}:repository/{name}/*")),
)
"""The table: one row per operation."""


def node_api(service: str, operation: str) -> NodeApi:
    """The row of `operation` of `service`; KeyError when the table has none."""
    for row in NODE_APIS:
        if (row.service, row.operation) == (service, operation):
            return row
    raise KeyError(f"{service} {operation}: no row in gpu_infra_facts.node_apis")


def actions(service: str, *operations: str) -> tuple[str, ...]:
    """Every RAM action the rows of `operations` grant, in table order."""
    return tuple(grant.action for operation in operations
                 for grant in node_api(service, operation).grants)


def allow_statements(service: str, operations: Iterable[str], *, region: str, account: str,
                     names: Sequence[str] = ("*",),
                     condition: dict[str, object] | None = None) -> list[dict[str, object]]:
    """RAM Allow statements granting the rows of `operations`: one statement per resource
    list, each template filled with every one of `names` (default "*"); `condition` on each."""
    by_resources: dict[tuple[str, ...], list[str]] = {}
    for operation in operations:
        for grant in node_api(service, operation).grants:
            resources = tuple(dict.fromkeys(
                grant.resource.format(region=region, account=account, name=name)
                for name in names))
            by_resources.setdefault(resources, []).append(grant.action)
    return [{"Effect": "Allow", "Action": granted, "Resource": list(resources),
             **({"Condition": condition} if condition else {})}
            for resources, granted in by_resources.items()]


__all__ = ["NODE_APIS", "Grant", "NodeApi", "actions", "allow_statements", "node_api"]
