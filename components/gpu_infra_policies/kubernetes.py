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
from gpu_infra_policies.pods import PodView, capability, pods, words
from gpu_infra_policies.texts import POD_HOLDERS

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
    """A Terway add-on whose config (JSON text or an object) turns NetworkPolicy off
    ({"NetworkPolicy": "false"} or false)."""
    config = addon.get("config")
    try:
        values = json.loads(config) if isinstance(config, str) and config else config
    except ValueError:
        return False
    return isinstance(values, Mapping) and str(values.get("NetworkPolicy", "")).lower() == "false"


def network_policy_cni(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """ACK clusters run Terway (podVswitchIds, or a terway add-on), the CNI that enforces
    Kubernetes NetworkPolicy on ACK (Flannel on ACK does not), with NetworkPolicy left on
    (a terway add-on's config {"NetworkPolicy": "false"} turns it off, in a cluster's
    `addons` or a cs.KubernetesAddon)."""
    if resource.type == t.KUBERNETES_ADDON:
        if str(resource.props.get("name", "")).startswith("terway") \
                and _policy_off(resource.props):
            yield (f"add-on {resource.props.get('name')} turns NetworkPolicy off: NetworkPolicy "
                   "objects are not enforced; set \"NetworkPolicy\": \"true\" in its config")
        return
    if resource.type not in (t.MANAGED_KUBERNETES, t.ACK_DEDICATED):
        return
    addons = [a for a in as_list(resource.props.get("addons")) if isinstance(a, Mapping)]
    terway = [a for a in addons if str(a.get("name", "")).startswith("terway")]
    for addon in terway:
        if _policy_off(addon):
            yield (f"add-on {addon.get('name')} turns NetworkPolicy off: NetworkPolicy objects "
                   "are not enforced; set \"NetworkPolicy\": \"true\" in its config")
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


BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
"""Capabilities the Kubernetes Pod Security Standards' baseline lets a container add
(kubernetes.io/docs/concepts/security/pod-security-standards, "Capabilities")."""
SAFE_SYSCTLS = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"})
"""The baseline's safe sysctls (same page, "Sysctls")."""


def pod_problems(pod: PodView, allowed: frozenset[str]) -> Iterator[str]:
    """Where `pod` breaks the baseline: host namespaces, hostPath volumes, unsafe sysctls,
    turned-off confinement, and per container privileged, privilege escalation, capabilities
    beyond the baseline and `allowed`, host ports."""
    for key in pod.host_namespaces:
        yield f"{key} true"
    for path in pod.host_paths:
        yield f"hostPath volume {path}"
    unsafe = sorted(set(pod.sysctls) - SAFE_SYSCTLS)
    if unsafe:
        yield f"sysctls {', '.join(unsafe)}"
    yield from pod.unconfined
    for container in pod.containers:
        where = container.path
        if container.privileged:
            yield f"{where} privileged"
        if container.escalation:
            yield f"{where} allowPrivilegeEscalation true"
        extra = sorted(set(container.added) - BASELINE_CAPABILITIES - allowed)
        if extra:
            yield f"{where} adds {', '.join(extra)}"
        for what in container.unconfined:
            yield f"{where} {what}"
        for port in container.host_ports:
            yield f"{where} hostPort {port}"


def pod_security(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """Every pod a resource describes (pods.py: Pods, controllers, Jobs, CronJobs, custom
    resources such as PyTorchJobs, ECI container groups, ESS ECI configurations) outside
    `exemptNamespaces` (default kube-system) meets the Pod Security Standards' baseline: not
    privileged, no host network, PID or IPC, no hostPath volumes or host ports, no unsafe
    sysctls, no Unconfined seccomp or AppArmor profile, no unmasked /proc, no Windows host
    process, no capability beyond the baseline's and `allowedCapabilities` (default
    IPC_LOCK, which RDMA needs); and no container allows privilege escalation. Checkov
    CKV_K8S_16-20, 25-27, 37, 39; a PersistentVolume on a hostPath too."""
    if resource.type == t.K8S_PERSISTENT_VOLUME:
        spec = resource.props.get("spec")
        host = spec.get("hostPath") if isinstance(spec, Mapping) else None
        if isinstance(host, Mapping):
            yield (f"spec.hostPath {host.get('path')}: a volume on the node's own disk lets "
                   "any pod that claims it into the node; use a CSI volume")
        return
    allowed = frozenset(capability(str(c)) for c in cfg["allowedCapabilities"])
    for pod in pods(resource):
        if pod.namespace is not None and pod.namespace in cfg["exemptNamespaces"]:
            continue
        problems = list(pod_problems(pod, allowed))
        if problems:
            where = f"{pod.path}: " if pod.path else ""
            yield (f"{where}{'; '.join(problems)}: the pod can reach past its container into "
                   "the node; drop these or run it in an exempt namespace")


ADMIN_ROLES = ("cluster-admin", "admin")
"""Roles that hand over a namespace or the cluster (and RBAC within it)."""
CLUSTER_WIDE_WRITERS = ("edit",)
"""Roles that write every object of a namespace: granted cluster-wide, of every namespace."""
ESCALATING_VERBS = ("escalate", "bind", "impersonate")
RBAC_ROLES = (t.K8S_CLUSTER_ROLE, t.K8S_ROLE)
RBAC_BINDINGS = (t.K8S_CLUSTER_ROLE_BINDING, t.K8S_ROLE_BINDING)
ANYONE = (("group", "system:unauthenticated"), ("user", "system:anonymous"))
"""Subjects every request without credentials is (kube-apiserver anonymous auth)."""
EVERY_IDENTITY = (("group", "system:authenticated"), ("group", "system:serviceaccounts"))
"""Groups holding every authenticated identity, or every service account of the cluster."""
NAMESPACE_SERVICE_ACCOUNTS = "system:serviceaccounts:"
"""Group prefix of every service account of one namespace."""
DISCOVERY_ROLES = ("system:basic-user", "system:discovery", "system:public-info-viewer")
"""What Kubernetes itself grants every authenticated identity (RBAC default bindings)."""
PUBLIC_ROLES = ("system:public-info-viewer",)
"""What Kubernetes itself grants anonymous requests."""
SYSTEM_NAMESPACE = "kube-system"


def _subjects(props: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(kind in lower case, name, namespace) of each subject; a service account named as a
    user (`system:serviceaccount:<ns>:<name>`) is a service account."""
    for subject in as_list(props.get("subjects")):
        if not isinstance(subject, Mapping):
            continue
        kind, name = str(subject.get("kind", "")).lower(), str(subject.get("name", ""))
        namespace = str(subject.get("namespace") or "")
        if kind == "user" and name.startswith("system:serviceaccount:"):
            kind, (namespace, _, name) = "serviceaccount", name.removeprefix(
                "system:serviceaccount:").partition(":")
        yield kind, name, namespace


def _system_identity(kind: str, name: str, namespace: str) -> bool:
    """A control-plane identity: a kube-system service account, or a `system:` user or
    group that is not one of the broad groups or the anonymous user."""
    if kind == "serviceaccount":
        return namespace == SYSTEM_NAMESPACE
    return name.startswith("system:") and (kind, name) not in (*ANYONE, *EVERY_IDENTITY) \
        and not name.startswith(NAMESPACE_SERVICE_ACCOUNTS)


def binding_problems(resource: Resource) -> Iterator[str]:
    """Who a RoleBinding or ClusterRoleBinding grants to (Checkov CKV_K8S_42 and beyond):
    nothing but the public info role to anonymous requests, nothing but discovery to every
    authenticated identity or every service account (of the cluster or of a namespace), no
    role to a namespace's `default` service account (every pod without its own gets it),
    cluster-admin and admin to control-plane identities only, edit not cluster-wide."""
    role = resource.props.get("roleRef")
    role_name = str(role.get("name", "")) if isinstance(role, Mapping) else ""
    cluster_wide = resource.type == t.K8S_CLUSTER_ROLE_BINDING
    for kind, name, namespace in _subjects(resource.props):
        who = f"{kind} {name}" + (f" in {namespace}" if namespace else "")
        if (kind, name) in ANYONE and role_name not in PUBLIC_ROLES:
            yield f"binds {role_name} to {name}: anyone who reaches the API server holds it"
        elif ((kind, name) in EVERY_IDENTITY or (
                kind == "group" and name.startswith(NAMESPACE_SERVICE_ACCOUNTS))) \
                and role_name not in DISCOVERY_ROLES:
            yield (f"binds {role_name} to the group {name}: every identity in it (every pod's "
                   "token among them) holds it; bind a named service account")
        elif kind == "serviceaccount" and name == "default":
            yield (f"binds {role_name} to the default service account of "
                   f"{namespace or 'its namespace'}: every pod there without its own account "
                   "holds it; bind a named service account")
        elif (role_name in ADMIN_ROLES or (cluster_wide and role_name in CLUSTER_WIDE_WRITERS)) \
                and not _system_identity(kind, name, namespace):
            yield (f"binds {role_name} to {who}; grant a role with the verbs they need")


def rbac(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Kubernetes RBAC grants no wildcard verbs on wildcard resources, no escalate / bind /
    impersonate (Checkov CKV_K8S_157, 158), and binds nothing to broad subjects or beyond
    what they need (binding_problems)."""
    props = resource.props
    if resource.type in RBAC_ROLES:
        for index, rule in enumerate(as_list(props.get("rules"))):
            if not isinstance(rule, Mapping):
                continue
            verbs = {str(v).lower() for v in words(rule.get("verbs"))}
            kinds = {str(r) for r in words(rule.get("resources"))}
            if "*" in verbs and "*" in kinds:
                yield f"rules[{index}] grants every verb on every resource; name them"
            if verbs & set(ESCALATING_VERBS):
                yield (f"rules[{index}] grants {', '.join(sorted(verbs & set(ESCALATING_VERBS)))}"
                       ": the holder can raise its own rights")
    elif resource.type in RBAC_BINDINGS:
        yield from binding_problems(resource)


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
                 reviews=frozenset({t.MANAGED_KUBERNETES, t.ACK_DEDICATED, t.KUBERNETES_ADDON}),
                 enforcement="advisory",
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
    ResourceRule("k8s-pod-security", "Pods meet the Kubernetes baseline, wherever they are "
                 "described", "security", "high",
                 "Drop privileged, host namespaces, hostPath and added capabilities; keep node "
                 "agents in an exempt namespace.", pod_security,
                 concern="kubernetes and registries",
                 reviews=frozenset({*POD_HOLDERS, t.K8S_PERSISTENT_VOLUME}),
                 schema={"exemptNamespaces": {"type": "array", "items": {"type": "string"},
                                              "description": "Namespaces of node agents. "
                                                             "Default kube-system."},
                         "allowedCapabilities": {"type": "array", "items": {"type": "string"},
                                                 "description": "Capabilities a pod may add. "
                                                                "Default IPC_LOCK."}},
                 defaults={"exemptNamespaces": ["kube-system"],
                           "allowedCapabilities": ["IPC_LOCK"]}),
    ResourceRule("k8s-rbac-least-privilege", "Kubernetes RBAC grants no admin wildcards and "
                 "binds nothing to broad subjects",
                 "security", "critical", "Grant named verbs on named resources; bind roles "
                 "to named service accounts, never to broad groups, a default service "
                 "account or anonymous requests; bind cluster-admin to no user or service "
                 "account.", rbac, concern="identity",
                 reviews=frozenset({*RBAC_ROLES, *RBAC_BINDINGS})),
    ResourceRule("node-pool-auto-repair", "ACK node pools repair failed nodes", "reliability",
                 "medium", "Set management { enable = true, autoRepair = true }.", auto_repair,
                 concern="reliability", reviews=frozenset({t.NODE_POOL})),
)
