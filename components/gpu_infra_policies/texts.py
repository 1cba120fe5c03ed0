"""The text a resource runs or hands to its workload, read safely: user data, image build
components, Cloud Assistant commands, OOS templates, Kubernetes containers' commands and
environment, ConfigMaps. Base64 (what ESS, launch templates, ACK and Cloud Assistant
expect) and gzip inside base64 (cloud-init) are decoded first. Pulumi secrets and unknowns
are not inspected (a secret arrives as a placeholder or not at all)."""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import Resource, as_list, is_unknown

MAX_DECODED = 1 << 20
"""Most bytes decompressed from gzip user data (16 KiB is the ECS limit; this bounds a
decompression bomb)."""
GZIP_MAGIC = b"\x1f\x8b"
SCRIPT_INPUTS: dict[str, tuple[str, ...]] = {
    t.INSTANCE: ("userData",), t.SCALING_CONFIGURATION: ("userData",),
    t.ECS_LAUNCH_TEMPLATE: ("userData",), t.LAUNCH_TEMPLATE: ("userData",),
    t.NODE_POOL: ("userData", "preUserData"), t.IMAGE_COMPONENT: ("content",),
    t.ECS_COMMAND: ("commandContent",), t.OOS_TEMPLATE: ("content",),
    t.IMAGE_PIPELINE: ("buildContent",),
}
"""Types whose inputs hold a script a node runs, and those inputs."""
KUBERNETES_WORKLOADS = (t.K8S_POD, t.K8S_DEPLOYMENT, t.K8S_DAEMON_SET, t.K8S_STATEFUL_SET,
                        t.K8S_REPLICA_SET, t.K8S_JOB, t.K8S_CRON_JOB)


def decoded(text: str) -> str | None:
    """`text` decoded from base64 (and gunzipped), or None if it is not base64 text."""
    compact = "".join(text.split())
    if not compact or len(compact) % 4:
        return None
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None
    if raw.startswith(GZIP_MAGIC):
        try:
            raw = zlib.decompressobj(wbits=31).decompress(raw, MAX_DECODED)
        except zlib.error:
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def readable(text: str) -> str:
    """`text` as a node would run it: decoded when it is base64, else as given."""
    return decoded(text) or text


def pod_specs(resource: Resource) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, pod spec) of a Kubernetes workload: a Pod's spec, a controller's template, a
    CronJob's job template, a Kubeflow-style job's replica templates."""
    spec = resource.props.get("spec")
    if not isinstance(spec, Mapping):
        return
    if resource.type == t.K8S_POD:
        yield "spec", spec
        return
    template = spec.get("jobTemplate") if resource.type == t.K8S_CRON_JOB else None
    prefix = "spec."
    if isinstance(template, Mapping):
        inner = template.get("spec")
        spec, prefix = (inner if isinstance(inner, Mapping) else {}), "spec.jobTemplate.spec."
    pod = spec.get("template")
    if isinstance(pod, Mapping) and isinstance(pod.get("spec"), Mapping):
        yield f"{prefix}template.spec", pod["spec"]
    for key, replicas in spec.items():  # PyTorchJob / MPIJob / RayCluster replica specs
        if isinstance(replicas, Mapping) and key.endswith(("ReplicaSpecs", "GroupSpecs")):
            for role, replica in replicas.items():
                pod = replica.get("template") if isinstance(replica, Mapping) else None
                if isinstance(pod, Mapping) and isinstance(pod.get("spec"), Mapping):
                    yield f"{prefix}{key}.{role}.template.spec", pod["spec"]


def containers(pod: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, container) of every container, init container and ephemeral container."""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for index, container in enumerate(as_list(pod.get(key))):
            if isinstance(container, Mapping):
                yield f"{key}[{index}]", container


KUBERNETES_SPELLING = ("command", "env", "name")
ECI_SPELLING = ("commands", "environmentVars", "key")
"""How a container names its command, its environment list and a variable's name:
Kubernetes, and ECI container groups."""


def container_texts(where: str, container: Mapping[str, Any],
                    spelling: tuple[str, str, str]) -> Iterator[tuple[str, str]]:
    """(where, text) of one container: its command line and each literal variable."""
    command, env_key, name_key = spelling
    words = [w for w in as_list(container.get(command)) + as_list(container.get("args"))
             if isinstance(w, str)]
    if words:
        yield f"{where}.{command}", " ".join(words)
    for env in as_list(container.get(env_key)):
        if isinstance(env, Mapping) and isinstance(env.get("value"), str):
            yield f"{where}.{env_key}.{env.get(name_key)}", f"{env.get(name_key)}={env['value']}"


def _workload_texts(resource: Resource) -> Iterator[tuple[str, str]]:
    if resource.type in KUBERNETES_WORKLOADS:
        for path, pod in pod_specs(resource):
            for where, container in containers(pod):
                yield from container_texts(f"{path}.{where}", container, KUBERNETES_SPELLING)
    elif resource.type == t.ECI_CONTAINER_GROUP:
        for key in ("containers", "initContainers"):
            for index, container in enumerate(as_list(resource.props.get(key))):
                if isinstance(container, Mapping):
                    yield from container_texts(f"{key}[{index}]", container, ECI_SPELLING)


def scripts(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of what the resource runs: its script inputs, decoded, and its
    Kubernetes or ECI containers' commands and environment."""
    for key in SCRIPT_INPUTS.get(resource.type, ()):
        value = resource.props.get(key)
        if isinstance(value, str) and value and not is_unknown(value):
            yield key, readable(value)
    yield from _workload_texts(resource)


DESCRIPTIONS = ("description", "comments", "summary")
"""Free-text inputs any type may have, shown in the console to whoever can list the resource."""


def configuration(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of the configuration a resource hands out in clear: its scripts and
    containers (environment values included), ConfigMap data, Function Compute environment
    variables, and the descriptions and tags of any resource."""
    yield from scripts(resource)
    props = resource.props
    if resource.type == t.K8S_CONFIG_MAP:
        data = props.get("data")
        for key, value in (data.items() if isinstance(data, Mapping) else ()):
            if isinstance(value, str):
                yield f"data.{key}", f"{key}={value}"
    if resource.type == t.FC_FUNCTION:
        env = props.get("environmentVariables")
        for key, value in (env.items() if isinstance(env, Mapping) else ()):
            if isinstance(value, str) and not is_unknown(value):
                yield f"environmentVariables.{key}", f"{key}={value}"
    for key in DESCRIPTIONS:
        value = props.get(key)
        if isinstance(value, str) and value and not is_unknown(value):
            yield key, value
    tags = props.get("tags")
    for key, value in (tags.items() if isinstance(tags, Mapping) else ()):
        yield f"tags.{key}", f"{key}={value}"
