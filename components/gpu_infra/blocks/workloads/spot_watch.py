"""The spot-notice watcher on ACK: a DaemonSet on the GPU nodes running the same
gpu-infra-spot-watch the ECS nodes run as a systemd unit. It writes the node's
/run/gpu-infra/spot/termination-time when the metadata service announces the reclaim; the
job's pods mount that directory read-only (training_job). The pool's spot remedy starts the
replacement node on the same notice; the node problem detector and the drain are ACK's.

Whether Terway pods reach the metadata service (100.100.100.200) unless a policy blocks it is
UNCONFIRMED: if they do not, the watcher logs "waiting" forever and the job still restarts
from its last periodic checkpoint.
"""

from __future__ import annotations

from typing import Any

from gpu_infra.blocks.bootstrap import step_source
from gpu_infra_facts import jobs

Manifest = dict[str, Any]

NAME = "gpu-infra-spot-watch"
NAMESPACE = "kube-system"
"""A node agent (it writes a host directory): the namespace the k8s-pod-security policy rule
exempts by default, as the cluster's own node agents."""
GPU_NODE_LABEL = "aliyun.accelerator/nvidia_name"
"""Label ACK puts on every GPU node (the GPU model): the DaemonSet runs where it exists."""


def spot_watch_objects(image: str) -> list[Manifest]:
    """ConfigMap (the script) and DaemonSet, in NAMESPACE; `image`: the mirrored curl image. The
    container runs as root (the image's own user cannot write the node's /run) with every
    capability dropped and a read-only root file system."""
    labels = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/managed-by": "gpu-infra"}
    meta = {"name": NAME, "namespace": NAMESPACE, "labels": labels}
    script = f"/opt/gpu-infra/bin/{NAME}"
    container = {
        "name": "watch", "image": image, "command": ["sh", script],
        "env": [{"name": "GPU_INFRA_SPOT_NOTICE_DIR", "value": jobs.SPOT_NOTICE_DIR},
                {"name": "GPU_INFRA_SPOT_POLL_SECONDS", "value": str(jobs.SPOT_POLL_SECONDS)},
                {"name": "GPU_INFRA_NODE_NAME",
                 "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"},
                      "limits": {"cpu": "50m", "memory": "32Mi"}},
        "securityContext": {"runAsUser": 0, "allowPrivilegeEscalation": False,
                            "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "script", "mountPath": "/opt/gpu-infra/bin",
                          "readOnly": True},
                         {"name": "notice", "mountPath": jobs.SPOT_NOTICE_DIR}]}
    daemonset = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "affinity": {"nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [
                                {"key": GPU_NODE_LABEL, "operator": "Exists"}]}]}}},
                    "tolerations": [{"operator": "Exists"}],
                    "priorityClassName": "system-node-critical",
                    "automountServiceAccountToken": False,
                    "containers": [container],
                    "volumes": [
                        {"name": "script", "configMap": {"name": NAME, "defaultMode": 0o555}},
                        {"name": "notice", "hostPath": {"path": jobs.SPOT_NOTICE_DIR,
                                                        "type": "DirectoryOrCreate"}}]}}}}
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
             "data": {NAME: step_source(NAME)}},
            daemonset]
