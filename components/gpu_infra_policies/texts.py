"""The text a resource runs or hands to its workload, read safely: user data, image build
components, Cloud Assistant commands, OOS templates, Kubernetes containers' commands and
environment, ConfigMaps. Base64 (what ESS, launch templates, ACK and Cloud Assistant
expect), gzip inside base64 (cloud-init) and bzip2 inside base64 are decoded first, and so are
here-documents that are (a script unpacking its payload: gpu-infra's user data). Pulumi
secrets and unknowns are not inspected (a secret arrives as a placeholder or not at all)."""

from __future__ import annotations

import base64
import binascii
import bz2
import re
import zlib
from collections.abc import Iterator, Mapping

from gpu_infra_facts import types as t
from gpu_infra_policies.base import Resource, as_list, is_unknown
from gpu_infra_policies.pods import ECI_CONTAINERS, pods

MAX_DECODED = 1 << 20
"""Most bytes decompressed from gzip user data (16 KiB is the ECS limit; this bounds a
decompression bomb)."""
GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
SCRIPT_INPUTS: dict[str, tuple[str, ...]] = {
    t.INSTANCE: ("userData",), t.SCALING_CONFIGURATION: ("userData",),
    t.ECS_LAUNCH_TEMPLATE: ("userData",), t.LAUNCH_TEMPLATE: ("userData",),
    t.NODE_POOL: ("userData", "preUserData"), t.IMAGE_COMPONENT: ("content",),
    t.ECS_COMMAND: ("commandContent",), t.OOS_TEMPLATE: ("content",),
    t.IMAGE_PIPELINE: ("buildContent",),
}
"""Types whose inputs hold a script a node runs, and those inputs."""
KUBERNETES_WORKLOADS = (t.K8S_POD, t.K8S_DEPLOYMENT, t.K8S_DAEMON_SET, t.K8S_STATEFUL_SET,
                        t.K8S_REPLICA_SET, t.K8S_JOB, t.K8S_CRON_JOB, t.K8S_POD_TEMPLATE,
                        t.K8S_REPLICATION_CONTROLLER, *t.K8S_CUSTOM_WORKLOADS)
"""Kubernetes types that describe pods (custom ones included); pods.py reads the pods of any
Kubernetes object by shape, these are the types the pack lists as reviewed."""
POD_HOLDERS = (*KUBERNETES_WORKLOADS, *ECI_CONTAINERS)
"""Every type whose pods the pod-security, secret and plain-HTTP rules read."""


def decoded(text: str) -> str | None:
    """`text` decoded from base64 (and gunzipped or bunzipped), or None if it is not base64
    text."""
    compact = "".join(text.split())
    if not compact or len(compact) % 4:
        return None
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        if raw.startswith(GZIP_MAGIC):
            raw = zlib.decompressobj(wbits=31).decompress(raw, MAX_DECODED)
        elif raw.startswith(BZIP2_MAGIC):
            raw = bz2.BZ2Decompressor().decompress(raw, MAX_DECODED)
    except (zlib.error, OSError):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


HERE_DOCUMENT = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1[^\n]*\n(.*?)\n\2$",
                           re.M | re.S)
"""A here-document (`<<'EOF'` ... `EOF`): its body is group 3."""


def readable(text: str) -> str:
    """`text` as a node would run it: decoded when it is base64, else as given; followed by
    each of its here-documents that is base64 (and gzip or bzip2) of text, decoded: what a
    script that unpacks a payload runs (gpu-infra's user data: `base64 -d <<'…' | …`)."""
    plain = decoded(text) or text
    inner = [body for match in HERE_DOCUMENT.finditer(plain)
             if (body := decoded(match[3])) is not None]
    return "\n".join([plain, *inner])


def _workload_texts(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of every container of every pod `resource` describes (pods.py): its
    image reference, its command line and each variable with a literal value."""
    for pod in pods(resource):
        for container in pod.containers:
            if container.image:
                yield f"{container.path}.image", container.image
            if container.command:
                yield f"{container.path}.{container.command_key}", " ".join(container.command)
            for name, value in container.env:
                yield f"{container.path}.{container.env_key}.{name}", f"{name}={value}"


def scripts(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of what the resource runs: its script inputs, decoded, and the commands
    and environment of the containers of every pod it describes."""
    for key in SCRIPT_INPUTS.get(resource.type, ()):
        value = resource.props.get(key)
        if isinstance(value, str) and value and not is_unknown(value):
            yield key, readable(value)
    yield from _workload_texts(resource)


DESCRIPTIONS = ("description", "comments", "summary")
"""Free-text inputs any type may have, shown in the console to whoever can list the resource."""


REGISTRY_CREDENTIAL_HOLDERS = (t.ECI_CONTAINER_GROUP, t.ESS_ECI_SCALING_CONFIGURATION)
"""Types that pull images with a registry user name and password."""
CONFIGURED_TYPES = (t.K8S_CONFIG_MAP, t.FC_FUNCTION, t.OOS_PARAMETER, t.KUBERNETES_ADDON,
                    t.MANAGED_KUBERNETES, t.ACK_DEDICATED, t.ACK_SERVERLESS)
"""Types whose plain configuration (beyond scripts, pods and tags) the secret rule reads."""


def _addon_configs(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of the JSON config of an add-on (cs.KubernetesAddon, or each of a
    cluster's `addons`)."""
    props = resource.props
    if resource.type == t.KUBERNETES_ADDON:
        addons = [("config", props)]
    elif resource.type in (t.MANAGED_KUBERNETES, t.ACK_DEDICATED, t.ACK_SERVERLESS):
        addons = [(f"addons[{index}].config", addon)
                  for index, addon in enumerate(as_list(props.get("addons")))]
    else:
        return
    for where, addon in addons:
        config = addon.get("config") if isinstance(addon, Mapping) else None
        if isinstance(config, str) and config and not is_unknown(config):
            yield where, config


def configuration(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of the configuration a resource hands out in clear: its scripts and the
    containers of its pods (images, command lines, environment values), ConfigMap data,
    Function Compute environment variables, plain OOS parameters, registry passwords of ECI
    container groups and ESS ECI configurations, add-on configs, and the descriptions and
    tags of any resource."""
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
    if resource.type == t.OOS_PARAMETER and isinstance(props.get("value"), str):
        yield "value", f"{props.get('parameterName')}={props['value']}"
    if resource.type in REGISTRY_CREDENTIAL_HOLDERS:
        for index, credential in enumerate(as_list(props.get("imageRegistryCredentials"))):
            password = credential.get("password") if isinstance(credential, Mapping) else None
            if isinstance(password, str) and not is_unknown(password):
                yield f"imageRegistryCredentials[{index}].password", f"password={password}"
    for key, value in _addon_configs(resource):
        yield key, value
    for key in DESCRIPTIONS:
        value = props.get(key)
        if isinstance(value, str) and value and not is_unknown(value):
            yield key, value
    tags = props.get("tags")
    for key, value in (tags.items() if isinstance(tags, Mapping) else ()):
        yield f"tags.{key}", f"{key}={value}"
