"""Kubernetes and registries: ACK clusters (API endpoint, RRSA, CNI), their add-ons and
node pools, container registries (ACR personal and enterprise), and the Kubernetes objects
a stack applies (pods and every controller that makes them)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    as_list,
    is_unknown,
)
from gpu_infra_policies.texts import KUBERNETES_WORKLOADS, containers, pod_specs

PUBLIC_ENDPOINT = {t.MANAGED_KUBERNETES: ("slbInternetEnabled", True),
                   t.ACK_DEDICATED: ("slbInternetEnabled", True),
                   t.ACK_SERVERLESS: ("endpointPublicAccessEnabled", False)}
"""Cluster type -> (input that puts the API server on the internet, its provider
default): managed and dedicated clusters get a public endpoint unless told not to."""


def api_endpoint(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """ACK API servers have no internet endpoint (slbInternetEnabled false on managed and
    dedicated clusters, where the provider default is true; endpointPublicAccessEnabled
    false on serverless ones): reach them from the VPC, a bastion or a VPN. Mandatory where
    the environment demands a private API (prod, which refuses `ack.public_api`), advisory
    where the stack file may choose a public one (dev, staging)."""
    if resource.type not in PUBLIC_ENDPOINT:
        return
    key, default = PUBLIC_ENDPOINT[resource.type]
    value = resource.props.get(key, default)
    if value is True:
        shown = "" if key in resource.props else " (the provider default)"
        yield (f"{key} is true{shown}: the Kubernetes API server listens on the internet; "
               "set it false and reach the API from the VPC")


RRSA_TYPES = (t.MANAGED_KUBERNETES, t.ACK_SERVERLESS)


def rrsa(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """ACK clusters enable RRSA (enableRrsa, default false): without it a pod's cloud
    credentials are its node's RAM role, shared by every pod on the node."""
    if resource.type in RRSA_TYPES:
        enabled = resource.props.get("enableRrsa", False)
        if not is_unknown(enabled) and enabled is not True:
            yield ("enableRrsa is off: every pod gets its node's RAM role; enable RRSA and "
                   "give each service account its own role")


def _policy_off(addon: Mapping[str, Any]) -> bool:
    """A Terway add-on whose config turns NetworkPolicy off ({"NetworkPolicy": "false"})."""
    config = addon.get("config")
    try:
        values = json.loads(config) if isinstance(config, str) and config else {}
    except ValueError:
        return False
    return isinstance(values, Mapping) and str(values.get("NetworkPolicy", "")).lower() == "false"


def network_policy_cni(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """ACK clusters run Terway (podVswitchIds, or a terway add-on), the CNI that enforces
    Kubernetes NetworkPolicy on ACK (Flannel on ACK does not), with NetworkPolicy left on
    (a terway add-on's config {"NetworkPolicy": "false"} turns it off)."""
    if resource.type not in (t.MANAGED_KUBERNETES, t.ACK_DEDICATED):
        return
    addons = [a for a in as_list(resource.props.get("addons")) if isinstance(a, Mapping)]
    terway = [a for a in addons if str(a.get("name", "")).startswith("terway")]
    for addon in terway:
        if _policy_off(addon):
            yield (f"add-on {addon.get('name')} turns NetworkPolicy off: NetworkPolicy objects "
                   "are not enforced; drop \"NetworkPolicy\": \"false\" from its config")
    if terway or is_unknown(resource.props.get("podVswitchIds")):
        return
    if not as_list(resource.props.get("podVswitchIds")):
        yield ("the cluster's CNI is not Terway: NetworkPolicy objects are not enforced; set "
               "podVswitchIds and the terway-eniip add-on")


def pinned_addons(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Add-ons (cs.KubernetesAddon, a cluster's `addons`) pin a version: unpinned, the
    cluster takes whatever ACK ships next, in every environment at its own time."""
    if resource.type == t.KUBERNETES_ADDON:
        if resource.props.get("version") in (None, ""):
            yield f"add-on {resource.props.get('name')} has no version; pin one"
    elif resource.type in (t.MANAGED_KUBERNETES, t.ACK_DEDICATED, t.ACK_SERVERLESS):
        for addon in as_list(resource.props.get("addons")):
            if isinstance(addon, Mapping) and addon.get("version") in (None, "") \
                    and not addon.get("disabled"):
                yield f"addons: {addon.get('name')} has no version; pin one"


def auto_repair(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """ACK node pools repair failed nodes (management.enable and autoRepair true; both
    default false)."""
    if resource.type != t.NODE_POOL:
        return
    management = resource.props.get("management")
    if is_unknown(management):
        return
    management = management if isinstance(management, Mapping) else {}
    if management.get("enable") is not True or management.get("autoRepair") is not True:
        yield "node pool does not repair failed nodes; set management.enable and autoRepair"


PUBLIC_REGISTRY = {t.REGISTRY_NAMESPACE: ("defaultVisibility", None),
                   t.REGISTRY_EE_NAMESPACE: ("defaultVisibility", "PRIVATE"),
                   t.REGISTRY_REPO: ("repoType", None), t.REGISTRY_EE_REPO: ("repoType", None),
                   t.CR_CHART_NAMESPACE: ("defaultRepoType", "PRIVATE"),
                   t.CR_CHART_REPOSITORY: ("repoType", "PRIVATE")}
"""Registry type -> (visibility input, its default)."""


def private_registries(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Container registries keep images private: ACR namespaces (default visibility, which
    auto-created repositories take) and repositories, personal and enterprise edition, and
    Helm chart namespaces and repositories are not PUBLIC (anyone could pull the images,
    and the code and weights baked into them)."""
    if resource.type not in PUBLIC_REGISTRY:
        return
    key, default = PUBLIC_REGISTRY[resource.type]
    value = resource.props.get(key, default)
    if isinstance(value, str) and value.upper() == "PUBLIC":
        yield f"{key} is {value}: anyone can pull; set PRIVATE"


RISKY_CAPABILITIES = ("SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH",
                      "NET_RAW", "BPF", "ALL")


def _pod_problems(pod: Mapping[str, Any], allowed: set[str]) -> Iterator[str]:
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key) is True:
            yield f"{key} true"
    for volume in as_list(pod.get("volumes")):
        if isinstance(volume, Mapping) and isinstance(volume.get("hostPath"), Mapping):
            yield f"hostPath volume {volume['hostPath'].get('path')}"
    for where, container in containers(pod):
        context = container.get("securityContext")
        context = context if isinstance(context, Mapping) else {}
        if context.get("privileged") is True:
            yield f"{where} privileged"
        if context.get("allowPrivilegeEscalation") is True:
            yield f"{where} allowPrivilegeEscalation true"
        capabilities = context.get("capabilities")
        added = as_list(capabilities.get("add")) if isinstance(capabilities, Mapping) else []
        risky = sorted({str(c).upper() for c in added} & set(RISKY_CAPABILITIES) - allowed)
        if risky:
            yield f"{where} adds {', '.join(risky)}"
        for port in as_list(container.get("ports")):
            if isinstance(port, Mapping) and port.get("hostPort"):
                yield f"{where} hostPort {port['hostPort']}"


def pod_security(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """Pods (and Deployments, DaemonSets, StatefulSets, ReplicaSets, Jobs, CronJobs) outside
    `exemptNamespaces` meet the Kubernetes baseline: not privileged, no host network, PID
    or IPC, no hostPath volumes or host ports, no privilege escalation, no capability
    beyond `allowedCapabilities` (default IPC_LOCK, which RDMA needs)."""
    if resource.type == t.K8S_PERSISTENT_VOLUME:
        spec = resource.props.get("spec")
        host = spec.get("hostPath") if isinstance(spec, Mapping) else None
        if isinstance(host, Mapping):
            yield (f"spec.hostPath {host.get('path')}: a volume on the node's own disk lets "
                   "any pod that claims it into the node; use a CSI volume")
        return
    if resource.type not in KUBERNETES_WORKLOADS:
        return
    metadata = resource.props.get("metadata")
    namespace = metadata.get("namespace", "default") if isinstance(metadata, Mapping) \
        else "default"
    if namespace in cfg["exemptNamespaces"]:
        return
    allowed = {str(c).upper() for c in cfg["allowedCapabilities"]}
    for path, pod in pod_specs(resource):
        problems = list(_pod_problems(pod, allowed))
        if problems:
            yield (f"{path}: {'; '.join(problems)}: the pod can reach past its container "
                   "into the node; drop these or run it in an exempt namespace")


ADMIN_ROLES = ("cluster-admin", "admin")
ESCALATING_VERBS = ("escalate", "bind", "impersonate")
RBAC_ROLES = (t.K8S_CLUSTER_ROLE, t.K8S_ROLE)
RBAC_BINDINGS = (t.K8S_CLUSTER_ROLE_BINDING, t.K8S_ROLE_BINDING)


def rbac(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Kubernetes RBAC grants no wildcard verbs on wildcard resources, no escalate / bind /
    impersonate, and binds cluster-admin (or admin) to nobody but system identities."""
    props = resource.props
    if resource.type in RBAC_ROLES:
        for index, rule in enumerate(as_list(props.get("rules"))):
            if not isinstance(rule, Mapping):
                continue
            verbs = {str(v) for v in as_list(rule.get("verbs"))}
            kinds = {str(r) for r in as_list(rule.get("resources"))}
            if "*" in verbs and "*" in kinds:
                yield f"rules[{index}] grants every verb on every resource; name them"
            if verbs & set(ESCALATING_VERBS):
                yield (f"rules[{index}] grants {', '.join(sorted(verbs & set(ESCALATING_VERBS)))}"
                       ": the holder can raise its own rights")
    elif resource.type in RBAC_BINDINGS:
        role = props.get("roleRef")
        if isinstance(role, Mapping) and role.get("name") in ADMIN_ROLES:
            subjects = [s.get("name") for s in as_list(props.get("subjects"))
                        if isinstance(s, Mapping)
                        and not str(s.get("name", "")).startswith("system:")]
            if subjects:
                yield (f"binds {role.get('name')} to {', '.join(map(str, subjects))}; grant a "
                       "role with the verbs they need")


ACK_CLUSTERS = frozenset({t.MANAGED_KUBERNETES, t.ACK_DEDICATED, t.ACK_SERVERLESS})
KUBERNETES_RULES: tuple[Rule, ...] = (
    ResourceRule("ack-private-api-endpoint", "ACK API servers have no internet endpoint",
                 "security", "critical", "Set slbInternetEnabled false (managed, dedicated) or "
                 "endpointPublicAccessEnabled false (serverless); use the VPC endpoint.",
                 api_endpoint, concern="network exposure", reviews=ACK_CLUSTERS,
                 mandatory_where="private_api"),
    ResourceRule("ack-rrsa", "ACK clusters give pods their own roles (RRSA)", "security",
                 "high", "Set enableRrsa true and bind one RAM role per service account.",
                 rrsa, concern="kubernetes and registries", reviews=frozenset(RRSA_TYPES)),
    ResourceRule("ack-network-policy-cni", "ACK clusters can enforce NetworkPolicy (Terway)",
                 "security", "low", "Create the cluster with Terway (podVswitchIds, "
                 "terway-eniip add-on).", network_policy_cni,
                 concern="kubernetes and registries",
                 reviews=frozenset({t.MANAGED_KUBERNETES, t.ACK_DEDICATED}), enforcement="advisory",
                 note="advisory: a CNI that can enforce NetworkPolicy only matters once "
                      "policies are written, which the stack may leave to the workloads"),
    ResourceRule("ack-addons-pinned", "Cluster add-ons pin their versions", "security", "low",
                 "Set version on each cs.KubernetesAddon and each entry of addons.",
                 pinned_addons, concern="kubernetes and registries",
                 reviews=frozenset({t.KUBERNETES_ADDON, *ACK_CLUSTERS}), enforcement="advisory",
                 note="advisory: an unpinned add-on is a change-control gap, not an exposure"),
    ResourceRule("registry-private", "Container registries and chart repositories are private",
                 "security", "critical", "Set defaultVisibility / repoType PRIVATE; share "
                 "images with named accounts through RAM.", private_registries,
                 concern="kubernetes and registries", reviews=frozenset(PUBLIC_REGISTRY)),
    ResourceRule("k8s-pod-security", "Pods meet the Kubernetes baseline", "security", "high",
                 "Drop privileged, host namespaces, hostPath and added capabilities; keep node "
                 "agents in an exempt namespace.", pod_security,
                 concern="kubernetes and registries",
                 reviews=frozenset({*KUBERNETES_WORKLOADS, t.K8S_PERSISTENT_VOLUME}),
                 schema={"exemptNamespaces": {"type": "array", "items": {"type": "string"},
                                              "description": "Namespaces of node agents. "
                                                             "Default kube-system."},
                         "allowedCapabilities": {"type": "array", "items": {"type": "string"},
                                                 "description": "Capabilities a pod may add. "
                                                                "Default IPC_LOCK."}},
                 defaults={"exemptNamespaces": ["kube-system"],
                           "allowedCapabilities": ["IPC_LOCK"]}),
    ResourceRule("k8s-rbac-least-privilege", "Kubernetes RBAC grants no admin wildcards",
                 "security", "critical", "Grant named verbs on named resources; bind "
                 "cluster-admin to no user or service account.", rbac, concern="identity",
                 reviews=frozenset({*RBAC_ROLES, *RBAC_BINDINGS})),
    ResourceRule("node-pool-auto-repair", "ACK node pools repair failed nodes", "reliability",
                 "medium", "Set management { enable = true, autoRepair = true }.", auto_repair,
                 concern="reliability", reviews=frozenset({t.NODE_POOL})),
)
