"""The model server of an inference stack on ACK: a Deployment on the GPU pool, a Service of
type LoadBalancer that makes the cloud controller create an NLB (private by default, spread
over the stack's zones, HTTP health check on the server's readiness path), and a
HorizontalPodAutoscaler on the GPUs' utilisation. The GPU pool's cluster autoscaler adds nodes
while pods are pending (on-demand base and spot above it, from `fleet`).

NLB annotations: ACK "Use annotations to configure NLB" (CCM v2.5.0 and later;
`spec.loadBalancerClass: alibabacloud.com/nlb`, else a CLB is made). `loadBalancerSourceRanges`:
the cloud controller makes a security group that accepts each range and drops 0.0.0.0/0 and
binds it to the NLB (kubernetes/cloud-provider-alibaba-cloud at eeb0ddc6,
pkg/controller/service/nlbv2/loadbalancer.go lines 95-102 and 668-692, model_applier.go
line 510); the CCM version ACK runs that has it is UNCONFIRMED. The HPA reads
DCGM_FI_DEV_GPU_UTIL as a Pods metric through the custom metrics API, which the cluster's
Prometheus (arms-prometheus, ACK GPU monitoring) serves only with a metrics adapter that
exposes it: that the ACK metrics adapter does so under this name is UNCONFIRMED.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from gpu_infra.blocks.workloads.network_policies import serving_policy
from gpu_infra_facts import jobs
from gpu_infra_facts.ack import GPU_RESOURCE, GPU_TAINT

Manifest = dict[str, Any]

NLB_CLASS = "alibabacloud.com/nlb"
ANNOTATION = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-"
GPU_UTIL_METRIC = "DCGM_FI_DEV_GPU_UTIL"
"""GPU utilisation in percent per GPU (ACK GPU monitoring's DCGM-compatible exporter)."""
ZONE_LABEL = "topology.kubernetes.io/zone"


@dataclass(frozen=True)
class ServingTarget:
    """What the model server needs of an inference stack on ACK."""

    name: str
    image: str
    command: Sequence[str]
    port: int
    readiness_path: str
    gpus_per_pod: int
    pool_selector: tuple[str, str]
    zone_maps: pulumi.Input[str]
    """The NLB's zones and vSwitches, `zone:vsw,zone:vsw` (zone_maps; at least two)."""
    min_replicas: int
    max_replicas: int
    target_gpu_util: int = 70
    internet_facing: bool = False
    models_claim: str | None = None
    model: str | None = None
    """The model's prefix in the models bucket: MODEL_DIR is /mnt/models/<model> (None: the
    bucket's root)."""
    namespace: str = "default"
    client_cidrs: Sequence[str] = ()
    """Who may reach the port: the Service's `loadBalancerSourceRanges` (the cloud
    controller binds the NLB to a security group that admits them and drops the rest) and
    the pods' NetworkPolicy. Empty: no source restriction on the NLB and no NetworkPolicy."""
    node_cidrs: Sequence[pulumi.Input[str]] = ()
    """The node vSwitches' CIDRs (kubelet probes, the NLB's own addresses), also admitted by
    the NetworkPolicy."""


def zone_maps(zone_vswitches: Mapping[str, str]) -> str:
    """The zone-maps annotation of zone -> vSwitch id (sorted by zone)."""
    return ",".join(f"{zone}:{vswitch}" for zone, vswitch in sorted(zone_vswitches.items()))


def serving_objects(target: ServingTarget) -> list[Manifest]:
    """Deployment, Service (NLB), HorizontalPodAutoscaler and, with `client_cidrs`, the
    pods' NetworkPolicy (`serving-clients`)."""
    labels = {"app.kubernetes.io/name": target.name, "app.kubernetes.io/managed-by": "gpu-infra"}
    meta = {"name": target.name, "namespace": target.namespace, "labels": labels}
    selector = {"app.kubernetes.io/name": target.name}
    gpus = {GPU_RESOURCE: target.gpus_per_pod}
    container: Manifest = {
        "name": "server", "image": target.image,
        **({"command": list(target.command)} if target.command else {}),
        "ports": [{"name": "http", "containerPort": target.port}],
        "readinessProbe": {"httpGet": {"path": target.readiness_path, "port": "http"},
                           "periodSeconds": 10, "failureThreshold": 3},
        "resources": {"limits": gpus, "requests": gpus}}
    pod: Manifest = {
        "nodeSelector": dict([target.pool_selector]),
        "tolerations": [{"key": GPU_TAINT[0], "operator": "Exists",
                         "effect": GPU_TAINT[2]}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE_LABEL,
                                       "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": selector}}],
        "containers": [container]}
    if target.models_claim:
        model_dir = f"{jobs.MODELS_PATH}/{target.model}" if target.model else jobs.MODELS_PATH
        container["env"] = [{"name": "MODEL_DIR", "value": model_dir}]
        container["volumeMounts"] = [{"name": "models", "mountPath": jobs.MODELS_PATH,
                                      "readOnly": True}]
        pod["volumes"] = [{"name": "models", "persistentVolumeClaim": {
            "claimName": target.models_claim, "readOnly": True}}]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                  "spec": {"selector": {"matchLabels": selector},
                           "template": {"metadata": {"labels": labels}, "spec": pod}}}
    service = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {**meta, "annotations": {
            f"{ANNOTATION}zone-maps": target.zone_maps,
            f"{ANNOTATION}address-type": "internet" if target.internet_facing else "intranet",
            f"{ANNOTATION}health-check-flag": "on",
            f"{ANNOTATION}health-check-type": "http",
            f"{ANNOTATION}health-check-uri": target.readiness_path,
            f"{ANNOTATION}health-check-connect-port": str(target.port)}},
        "spec": {"type": "LoadBalancer", "loadBalancerClass": NLB_CLASS,
                 "externalTrafficPolicy": "Local", "selector": selector,
                 **({"loadBalancerSourceRanges": list(target.client_cidrs)}
                    if target.client_cidrs else {}),
                 "ports": [{"name": "http", "port": target.port, "targetPort": "http",
                            "protocol": "TCP"}]}}
    autoscaler = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": target.name},
                 "minReplicas": target.min_replicas, "maxReplicas": target.max_replicas,
                 "metrics": [{"type": "Pods", "pods": {
                     "metric": {"name": GPU_UTIL_METRIC},
                     "target": {"type": "AverageValue",
                                "averageValue": str(target.target_gpu_util)}}}]}}
    policies = [serving_policy(target.namespace, selector, target.port, target.client_cidrs,
                               target.node_cidrs)] if target.client_cidrs else []
    return [deployment, service, autoscaler, *policies]
