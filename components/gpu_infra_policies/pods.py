"""Every pod a resource describes, read one way whatever holds it: a Pod's spec, the template
of any controller, Job or CronJob, the pod templates of any custom resource (the training
operator's `pytorchReplicaSpecs`, KubeRay's groups, JobSet's and LeaderWorkerSet's nested
templates, KServe's predictor, Argo's templates: found by shape, not by kind), an ECI
container group and an ESS ECI scaling configuration. The pod-security rule and the secret
and plain-HTTP rules (texts.py) read the same `PodView`s.

Spellings are read as the engine may pass them: camelCase or snake_case keys, flags as
booleans or "true" strings, ports as numbers or numeric strings, capabilities in any case,
with or without `CAP_`, as a list or one string; an absent namespace is `default`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import Resource, as_list, is_unknown, number

MAX_DEPTH = 24
"""How deep a custom resource is searched for pod templates."""
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers", "sidecars")
SINGLE_CONTAINERS = ("container", "script")
"""A template's lone container (Argo Workflows' `container` and `script` templates)."""
ECI_CONTAINERS = {t.ECI_CONTAINER_GROUP: ("containers", "initContainers"),
                  t.ESS_ECI_SCALING_CONFIGURATION: ("containers", "initContainers"),
                  t.INSTANCE_REFRESH: ("desiredConfigurationContainers",)}
"""Types that describe an ECI pod (the resource itself) and the inputs listing its
containers (an ESS instance refresh rolls its group to a desired configuration's)."""
NOT_PODS = (t.K8S_CRD,)
"""Kubernetes types that describe no pod (a CRD's schema names `containers` as properties)."""
UNCONFINED = "unconfined"


def field(mapping: Any, key: str) -> Any:
    """`mapping[key]` under its camelCase or snake_case spelling (None if absent)."""
    if not isinstance(mapping, Mapping):
        return None
    if key in mapping:
        return mapping[key]
    return mapping.get(re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower())


def flag(value: Any) -> bool:
    """True for true and the string "true" in any case."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def words(value: Any) -> list[str]:
    """A list of strings (one string is a list of one); unknowns dropped."""
    items = [value] if isinstance(value, str) else as_list(value)
    return [item for item in items if isinstance(item, str) and not is_unknown(item)]


def mappings(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list input (one mapping is a list of one)."""
    items = [value] if isinstance(value, Mapping) else as_list(value)
    return [item for item in items if isinstance(item, Mapping)]


def capability(name: str) -> str:
    """`cap_sys_admin` -> `SYS_ADMIN`."""
    return name.strip().upper().removeprefix("CAP_")


@dataclass(frozen=True)
class ContainerView:
    """One container, whatever spelled it."""

    path: str
    image: str
    privileged: bool
    escalation: bool
    """allowPrivilegeEscalation set true."""
    added: tuple[str, ...]
    """Capabilities added, upper case without CAP_."""
    host_ports: tuple[int, ...]
    unconfined: tuple[str, ...]
    """Confinement turned off: seccomp or AppArmor Unconfined, procMount Unmasked, a
    Windows host process."""
    command_key: str
    command: tuple[str, ...]
    """Command and arguments, in order."""
    env_key: str
    env: tuple[tuple[str, str], ...]
    """(name, literal value) of each variable with a value written out."""


@dataclass(frozen=True)
class PodView:
    """One pod description, whatever holds it."""

    path: str
    namespace: str | None
    """The Kubernetes namespace (None for ECI, which has none)."""
    host_namespaces: tuple[str, ...]
    """hostNetwork, hostPID, hostIPC where true."""
    host_paths: tuple[str, ...]
    sysctls: tuple[str, ...]
    unconfined: tuple[str, ...]
    containers: tuple[ContainerView, ...]


def _unconfined(context: Any) -> list[str]:
    found = []
    for key in ("seccompProfile", "appArmorProfile"):
        kind = field(field(context, key), "type")
        if isinstance(kind, str) and kind.lower() == UNCONFINED:
            found.append(f"{key} Unconfined")
    proc = field(context, "procMount")
    if isinstance(proc, str) and proc.lower() == "unmasked":
        found.append("procMount Unmasked")
    if flag(field(field(context, "windowsOptions"), "hostProcess")):
        found.append("windowsOptions.hostProcess true")
    return found


def _image(container: Any) -> str:
    image = field(container, "image")
    return image if isinstance(image, str) and not is_unknown(image) else ""


def _host_ports(container: Any) -> tuple[int, ...]:
    ports = (number(field(port, "hostPort")) for port in as_list(field(container, "ports")))
    return tuple(int(port) for port in ports if port)


def _k8s_container(path: str, container: Mapping[str, Any]) -> ContainerView:
    context = field(container, "securityContext")
    added = words(field(field(context, "capabilities"), "add"))
    env = [(str(field(var, "name")), field(var, "value"))
           for var in as_list(field(container, "env"))]
    return ContainerView(
        path, _image(container), flag(field(context, "privileged")),
        flag(field(context, "allowPrivilegeEscalation")),
        tuple(capability(c) for c in added), _host_ports(container), tuple(_unconfined(context)),
        "command", tuple(words(field(container, "command")) + words(field(container, "args"))),
        "env", tuple((name, value) for name, value in env
                     if isinstance(value, str) and not is_unknown(value)))


def _k8s_containers(spec: Mapping[str, Any], path: str) -> Iterator[ContainerView]:
    for key in CONTAINER_LISTS:
        for index, container in enumerate(as_list(field(spec, key))):
            if isinstance(container, Mapping):
                yield _k8s_container(f"{path}.{key}[{index}]", container)
    for key in SINGLE_CONTAINERS:
        container = field(spec, key)
        if isinstance(container, Mapping):
            yield _k8s_container(f"{path}.{key}", container)


def _k8s_pod(path: str, spec: Mapping[str, Any], namespace: str) -> PodView:
    context = field(spec, "securityContext")
    host_paths = []
    for volume in as_list(field(spec, "volumes")):
        host = field(volume, "hostPath")
        if isinstance(host, Mapping) or (isinstance(host, str) and host):
            host_paths.append(str(field(host, "path") if isinstance(host, Mapping) else host))
    return PodView(
        path, namespace,
        tuple(key for key in ("hostNetwork", "hostPID", "hostIPC") if flag(field(spec, key))),
        tuple(host_paths),
        tuple(str(field(s, "name")) for s in as_list(field(context, "sysctls"))),
        tuple(_unconfined(context)), tuple(_k8s_containers(spec, path)))


def _holds_containers(value: Mapping[str, Any]) -> bool:
    return any(isinstance(field(value, key), (list, tuple)) for key in CONTAINER_LISTS) or any(
        isinstance(field(value, key), Mapping) and field(field(value, key), "image") is not None
        for key in SINGLE_CONTAINERS)


def _pod_specs(value: Any, path: tuple[str, ...],
               depth: int = 0) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(dotted path, pod spec) of every pod spec in `value`: a mapping holding containers,
    or the `spec` of a `template` that holds no template itself (a Job's spec inside a
    JobSet's template does)."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, Mapping):
        if path and (_holds_containers(value) or (
                path[-2:] == ("template", "spec") and "template" not in value)):
            yield ".".join(path), value
            return
        for key, item in value.items():
            if isinstance(key, str) and key not in ("metadata", "status"):
                yield from _pod_specs(item, (*path, key), depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            where = (*path[:-1], f"{path[-1]}[{index}]") if path else (f"[{index}]",)
            yield from _pod_specs(item, where, depth + 1)


def _eci_container(path: str, container: Mapping[str, Any]) -> ContainerView:
    """An ECI container: `securityContexts` [{privileged, capabilities: [{adds}]}] (eci
    ContainerGroup) or flat `securityContextCapabilityAdds` (ESS ECI configurations)."""
    contexts = mappings(field(container, "securityContexts"))
    added = words(field(container, "securityContextCapabilityAdds"))
    for context in contexts:
        for caps in mappings(field(context, "capabilities")):
            added += words(field(caps, "adds"))
    env = [(str(field(var, "key")), field(var, "value"))
           for var in as_list(field(container, "environmentVars"))]
    return ContainerView(
        path, _image(container), any(flag(field(c, "privileged")) for c in contexts) or flag(
            field(container, "privileged")), False, tuple(capability(c) for c in added),
        (), (), "commands",
        tuple(words(field(container, "commands")) + words(field(container, "args"))),
        "environmentVars", tuple((name, value) for name, value in env
                                 if isinstance(value, str) and not is_unknown(value)))


def _eci_pod(props: Mapping[str, Any], container_keys: tuple[str, ...]) -> PodView:
    host_paths = [str(field(v, "hostPathVolumePath") or field(v, "type"))
                  for v in as_list(field(props, "volumes"))
                  if field(v, "hostPathVolumePath")
                  or str(field(v, "type") or "").lower() == "hostpathvolume"]
    sysctls = [field(s, "name") for s in as_list(field(props, "securityContextSysctls"))]
    for key in ("securityContexts", "eciSecurityContexts"):
        for context in mappings(field(props, key)):
            sysctls += [field(s, "name") for s in mappings(field(context, "sysctls"))]
    containers = [_eci_container(f"{key}[{index}]", container)
                  for key in container_keys
                  for index, container in enumerate(as_list(field(props, key)))
                  if isinstance(container, Mapping)]
    return PodView("", None, (), tuple(host_paths), tuple(str(s) for s in sysctls), (),
                   tuple(containers))


def pods(resource: Resource) -> Iterator[PodView]:
    """Every pod `resource` describes (none for a type that describes none)."""
    if resource.type in ECI_CONTAINERS:
        yield _eci_pod(resource.props, ECI_CONTAINERS[resource.type])
        return
    if not resource.type.startswith("kubernetes:") or resource.type in NOT_PODS:
        return
    metadata = resource.props.get("metadata")
    namespace = field(metadata, "namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else "default"
    if resource.type == t.K8S_POD:
        spec = resource.props.get("spec")
        found = [("spec", spec)] if isinstance(spec, Mapping) else []
    else:
        found = list(_pod_specs(resource.props, ()))
    for path, spec in found:
        yield _k8s_pod(path, spec, namespace)
