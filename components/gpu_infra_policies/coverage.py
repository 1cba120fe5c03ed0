"""Coverage: which rules review each resource type, and the types no security rule looks
at, so a reviewer can tell "reviewed and fine" from "not reviewed".

A type counts as reviewed when a security rule lists it in `reviews`, or when it is in
NO_CONCERN (read and found to open, hold or grant nothing on its own, with the reason).
Everything else in a stack is reported by the advisory `unreviewed-types` rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import CONCERNS, Concern, Context, Resource, Rule

NO_CONCERN: dict[str, str] = {
    t.CMS_ALARM: "an alarm: watches metrics, opens and holds nothing",
    t.ALARM_CONTACT: "an alarm recipient",
    t.ALARM_CONTACT_GROUP: "a group of alarm recipients",
    t.CMS_DYNAMIC_TAG_GROUP: "a monitoring group chosen by tag",
    t.EVENT_RULE: "routes cloud events to a queue of the stack",
    t.CMS_METRIC_RULE_TEMPLATE: "alarm thresholds",
    t.CMS_MONITOR_GROUP: "a monitoring group",
    t.CMS_MONITOR_GROUP_INSTANCES: "members of a monitoring group",
    t.CMS_GROUP_METRIC_RULE: "an alarm on a monitoring group",
    t.SERVICE_METRIC_ALARM_RULE: "an alarm",
    t.CMS_SLS_GROUP: "names log stores of the stack that CloudMonitor reads; grants nothing",
    t.CMS_NAMESPACE: "a store of the stack's own imported metrics",
    t.CMS_HYBRID_SLS_TASK: "counts log events of the stack into its metric store",
    t.ECS_DISK_ATTACHMENT:
        "attaches a disk the disk rules judge to an instance of the stack",
    t.KEY_PAIR: "a public key (the private key never leaves you)",
    t.EIP_ADDRESS: "an address; what it exposes is judged on its association "
                   "(no-eip-on-nodes)",
    t.ECS_RAM_ROLE_ATTACHMENT:
        "binds a role whose trust and policies the identity rules judge",
    t.RESERVED_INSTANCE: "a billing commitment",
    t.IMAGE_PIPELINE_EXECUTION: "runs a pipeline of the stack",
    t.ESS_ALARM: "a scaling alarm",
    t.LIFECYCLE_HOOK: "notifies a queue of the stack on scaling",
    t.ESS_NOTIFICATION: "notifies a queue of the stack on scaling",
    t.SCALING_RULE: "how many nodes to add or remove",
    t.SCHEDULED_TASK: "changes a scaling group's size on a schedule",
    t.CAPACITY_RESERVATION: "holds instance capacity in a zone; opens, holds and grants "
                            "nothing",
    t.ELASTICITY_ASSURANCE: "guarantees instance capacity in a zone; opens, holds and grants "
                            "nothing",
    t.NAS_PROTOCOL_SERVICE: "the NFS front end of a CPFS file system, in the stack's VPC; "
                            "who may mount is its export's access group (nas-no-world-access)",
    t.NAS_PROTOCOL_MOUNT_TARGET: "a VPC export of the protocol service; who may mount is its "
                                 "access group's rules (nas-no-world-access)",
    t.SERVER_GROUP_ATTACHMENT:
        "puts scaling group nodes behind a load balancer the listener rules judge",
    t.MNS_QUEUE: "a queue only the stack's events reach",
    t.NAS_MOUNT_TARGET: "a VPC mount point; who may mount is the access group's rules "
                        "(nas-no-world-access)",
    t.NAT_GATEWAY: "egress only; inbound forwarding is a ForwardEntry",
    t.SNAT_ENTRY: "egress address translation",
    t.VSWITCH: "a private subnet",
    t.DEPLOYMENT_SET: "placement of nodes",
    t.SCALING_GROUP: "how many nodes; what they are is the scaling configuration the "
                     "node rules judge",
    t.AUTO_SNAPSHOT_POLICY: "a backup schedule",
    t.SNAPSHOT_POLICY_ATTACHMENT: "applies a backup schedule to a disk",
    t.BUCKET_VERSIONING: "keeps old object versions",
    t.RESOURCE_GROUP: "a grouping for monitoring and billing; grants nothing",
    t.REGISTRY_EE_INSTANCE: "a registry; who pulls is its namespaces', repositories' and "
                            "endpoint ACLs' business (registry-private, no-world-ingress)",
    t.REGISTRY_VPC_ENDPOINT: "links the registry to a VPC: private access",
    t.K8S_NAMESPACE: "a name scope; what runs in it is judged on the workloads",
    t.TLS_PRIVATE_KEY: "a key generated into the state (a Pulumi secret); where it goes is "
                       "judged on the resource holding it",
    t.OOS_SECRET_PARAMETER: "a value KMS encrypts at rest; who decrypts it is the RAM "
                            "policies' business (the identity rules)",
    t.K8S_STORAGE_CLASS: "how volumes are provisioned (encryption: the disks' rules)",
    t.K8S_PERSISTENT_VOLUME_CLAIM: "a claim on a volume the volume rules judge",
    t.K8S_SECRET: "holds secrets the way Kubernetes means to; RBAC decides who reads them",
    t.K8S_SERVICE_ACCOUNT: "an identity; the RAM role it assumes (RRSA) is judged by its "
                           "trust policy",
    t.RAM_USER: "an identity; its console login (console-mfa), keys "
                              "(ram-no-access-keys) and policies are judged where granted",
    t.RAM_GROUP: "a set of users; its policies are judged where attached",
    t.RAM_GROUP_MEMBERSHIP: "puts users in a group",
    t.RAM_USER_GROUP_ATTACHMENT: "puts a user in a group",
    t.RAM_ROLE_ATTACHMENT:
        "binds a role whose trust and policies the identity rules judge",
    t.KMS_ALIAS: "a second name for a key",
    t.NETWORK_INTERFACE:
        "an interface; who reaches it is its security groups' rules, a public address its "
        "EIP association (no-eip-on-nodes)",
    t.NETWORK_INTERFACE_ATTACHMENT:
        "attaches an interface to an instance of the stack",
    t.VPC_ROUTE_TABLE: "a route table; its routes are judged one by one "
                                          "(routes-through-instances)",
    t.K8S_CRD: "the schema of a custom object kind (the objects' pods are judged as "
               "workloads); grants nothing",
    t.K8S_NETWORK_POLICY: "only narrows which traffic reaches or leaves the pods it selects "
                          "(a pod no policy selects takes everything); opens nothing",
    t.K8S_HPA: "sets how many replicas a Deployment of the stack runs (the pods are judged "
               "on the Deployment); grants nothing",
    t.K8S_VALIDATING_WEBHOOK: "sends admission requests to a Service of the stack, which may "
                              "refuse them but not change them; who may call the API is RBAC's "
                              "business (k8s-rbac-least-privilege)",
    t.HBR_POLICY: "a backup schedule and retention (how long backups are kept is the "
                  "stack's choice, storage.backup)",
    t.HBR_POLICY_BINDING: "applies a backup policy of the stack to one of its file systems or "
                          "buckets",
    t.SLS_MACHINE_GROUP: "names the nodes whose agents ship logs (by the fleet's user-defined "
                         "id); grants nothing",
    t.SLS_ATTACHMENT: "applies a collection config to a machine group of the stack",
    t.SLS_STORE_INDEX: "makes a log store of the stack searchable; holds no logs, grants nothing",
    t.SLS_PIPELINE_CONFIG: "which files and journal a node agent reads, written to a log "
                           "store of the stack's project (the store is judged: encryption, "
                           "retention)",
    t.ECS_INVOCATION: "runs a command of the stack on its nodes (the command's content is "
                      "judged by the secrets rules)",
    t.VPC_ROUTE_TABLE_ATTACHMENT: "applies a route table to a "
                                                              "vSwitch",
}
"""Types read and found to carry no security concern of their own, and why."""
UNREVIEWED_RULE = "unreviewed-types"


def is_cloud_resource(type_token: str, component_packages: Sequence[str]) -> bool:
    """True for a provider resource: not Pulumi's own (stack, providers) and not a component
    of `component_packages`."""
    package = type_token.split(":", 1)[0]
    return package != "pulumi" and package not in component_packages


@dataclass(frozen=True)
class TypeCoverage:
    """Who reviews one type."""

    type: str
    rules: tuple[str, ...]
    """Every rule that reviews it, in report order."""
    security_rules: tuple[str, ...]
    concerns: tuple[Concern, ...]
    """The concerns of the security rules that review it."""
    no_concern: str | None
    """Why the type needs no security rule, if it is one of NO_CONCERN."""

    @property
    def reviewed(self) -> bool:
        """True if a security rule reviews the type, or it carries no security concern."""
        return bool(self.security_rules) or self.no_concern is not None


def type_coverage(type_token: str, rules: Sequence[Rule]) -> TypeCoverage:
    """The rules and concerns that review `type_token`."""
    reviewing = [rule for rule in rules if type_token in rule.reviews]
    security = [rule for rule in reviewing if rule.category == "security"]
    concerns = tuple(c for c in CONCERNS if any(rule.concern == c for rule in security))
    return TypeCoverage(type_token, tuple(r.name for r in reviewing),
                        tuple(r.name for r in security), concerns, NO_CONCERN.get(type_token))


def known_types(rules: Sequence[Rule]) -> list[str]:
    """Every type some rule reviews or NO_CONCERN names, sorted."""
    return sorted({token for rule in rules for token in rule.reviews} | set(NO_CONCERN))


def stack_coverage(resources: Sequence[Resource], rules: Sequence[Rule],
                   component_packages: Sequence[str] = (t.COMPONENT_PACKAGE,)
                   ) -> dict[str, tuple[TypeCoverage, list[Resource]]]:
    """Type -> (its coverage, the stack's resources of it), for the cloud resources."""
    found: dict[str, tuple[TypeCoverage, list[Resource]]] = {}
    for resource in resources:
        if not is_cloud_resource(resource.type, component_packages):
            continue
        if resource.type not in found:
            found[resource.type] = (type_coverage(resource.type, rules), [])
        found[resource.type][1].append(resource)
    return found


def unreviewed(rules: Sequence[Rule]) -> Any:
    """The check of `unreviewed-types` over `rules`: one finding per type in the stack that
    no security rule reviews (on its first resource), naming how many there are."""

    def check(resources: Sequence[Resource], _: Mapping[str, Any],
              __: Context) -> Iterator[tuple[Resource | None, str]]:
        for coverage, found in stack_coverage(resources, rules).values():
            if coverage.reviewed:
                continue
            names = ", ".join(r.name for r in found[:5]) + (", ..." if len(found) > 5 else "")
            yield found[0], (f"no security rule reviews resources of this type ({len(found)}: "
                             f"{names}); review {'them' if len(found) > 1 else 'it'} by hand")

    return check


def coverage_markdown(rules: Sequence[Rule]) -> str:
    """The README's coverage table: every type the pack knows, the concerns and rules that
    review it (generated; tests/test_policy_coverage.py keeps the README current)."""
    lines = ["| Resource type | Concerns | Rules |", "|---|---|---|"]
    for token in known_types(rules):
        coverage = type_coverage(token, rules)
        concerns = ", ".join(coverage.concerns) or (
            f"none: {coverage.no_concern}" if coverage.no_concern else "NOT REVIEWED")
        lines.append(f"| `{token}` | {concerns} | {', '.join(coverage.rules) or '-'} |")
    return "\n".join(lines)


@dataclass(frozen=True)
class CoverageSummary:
    """How much of a stack the security rules reviewed."""

    resources: int
    reviewed: int
    types: int
    unreviewed_types: tuple[tuple[str, int], ...]
    """(type, resources of it) that no security rule reviews."""

    def line(self) -> str:
        """`Policy coverage: 84 of 86 resources (31 of 33 types) reviewed; not reviewed: ...`."""
        reviewed_types = self.types - len(self.unreviewed_types)
        text = (f"Policy coverage: {self.reviewed} of {self.resources} resources "
                f"({reviewed_types} of {self.types} types) reviewed by a security rule")
        if self.unreviewed_types:
            text += "; not reviewed: " + ", ".join(f"{token} ({count})"
                                                   for token, count in self.unreviewed_types)
        return text

    def to_json(self) -> dict[str, Any]:
        """The `policyCoverage` record of `plan --json`."""
        return {"resources": self.resources, "reviewedResources": self.reviewed,
                "types": self.types, "unreviewedTypes": [
                    {"type": token, "resources": count}
                    for token, count in self.unreviewed_types]}


def summarize(resources: Sequence[Resource], rules: Sequence[Rule]) -> CoverageSummary:
    """The coverage of a stack's cloud resources by `rules`."""
    by_type = stack_coverage(resources, rules)
    unreviewed_types = tuple(sorted((token, len(found)) for token, (coverage, found)
                                    in by_type.items() if not coverage.reviewed))
    total = sum(len(found) for _, found in by_type.values())
    return CoverageSummary(total, total - sum(count for _, count in unreviewed_types),
                           len(by_type), unreviewed_types)


def rules_markdown(rules: Sequence[Rule]) -> str:
    """The README's rules table, by concern (generated; tests/test_policy_coverage.py keeps
    it current): level (mandatory, mandatory in prod for `prod-*` rules, mandatory in prod
    and advisory elsewhere for rules with `mandatory_where`, advisory, disabled), severity,
    how many types the rule reviews, what it checks; then why each advisory security rule
    is advisory."""
    lines = ["| Concern | Rule | Level | Severity | Types | Checks |", "|---|---|---|---|---|---|"]
    for concern in CONCERNS:
        for rule in (r for r in rules if r.concern == concern):
            level: str = rule.default_enforcement
            if level == "mandatory" and rule.name.startswith("prod-"):
                level = "mandatory in prod"
            elif level == "mandatory" and rule.mandatory_where is not None:
                level = "mandatory in prod, advisory elsewhere"
            lines.append(f"| {concern} | `{rule.name}` | {level} | {rule.severity} | "
                         f"{len(rule.reviews) or 'stack'} | {rule.description} |")
    lines += ["", "Left advisory on purpose:"]
    for rule in rules:
        if rule.category == "security" and rule.default_enforcement == "advisory":
            reason = rule.note.removeprefix("advisory by default: ").removeprefix("advisory: ")
            lines.append(f"- `{rule.name}`: {reason}")
    return "\n".join(lines)
