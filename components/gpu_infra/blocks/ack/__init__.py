"""The ACK platform: an ACK Pro cluster, its node pools, add-ons, registry and Kubernetes
storage objects (`platform: ack` on training and inference stacks).

The API the job layer builds on (issue 24): an ACK layout (gpu_infra.layouts.ack) exposes
`layout.platform`, an `AckPlatform`:

- `provider`: the pulumi-kubernetes Provider of the cluster; pass it as
  `pulumi.ResourceOptions(provider=platform.provider)` to every Kubernetes object. It is built
  from `cs.get_cluster_credential` (a kubeconfig valid CREDENTIAL_MINUTES, 240), fetched anew
  by every run of the program, so `pulumi preview`/`up` never use an expired credential; the
  provider's recorded kubeconfig only matters to `pulumi destroy` and `pulumi refresh`
  without the program: run them as `pulumi destroy --run-program` / `pulumi refresh
  --run-program` (or a `pulumi up` first) so they fetch a fresh one. The kubeconfig is a
  Pulumi secret and never a stack output.
- `cluster_id`, `kubernetes_version` (the pinned `1.<minor>.<patch>-aliyun.<n>`),
  `kubernetes_minor` (`1.<minor>`, for the OpenAPI schema the objects are checked against).
- `gpu_pools`: fleet name -> `GpuPool(node_pool_ids, labels, taint, erdma, gpus_per_node)`:
  schedule GPU pods with `nodeSelector: labels` (`gpu-infra/pool: <fleet>`) and a toleration
  of `taint` (`nvidia.com/gpu=true:NoSchedule`); request `nvidia.com/gpu` and, with
  `erdma`, `aliyun/erdma`.
- `system_labels`: the system pool's node labels (`gpu-infra/pool: system`), for
  controllers and operators (no toleration needed).
- `registry`: `address` (VPC pull address), `namespace`, `mirror_namespace`,
  `repositories` (name -> image prefix); the cluster pulls through the ACR credential
  helper add-on, no pull secret needed.
- `storage`: `namespace` (`gpu-jobs`), `scratch_class` (`gpu-infra-scratch`),
  `shared_claim` (`shared`, the NAS/CPFS file system, ReadWriteMany, or None),
  `bucket_claims` (purpose -> claim, e.g. `oss-checkpoints`).
- `oss_role_name`: the RRSA role that mounts the buckets (RRSA is on in every cluster;
  jobs make their own RRSA roles with `rrsa_trust_policy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpu_infra.blocks.ack.kube import KubeStorage
from gpu_infra.blocks.registry import Registry
from gpu_infra_facts.ack import ERDMA_RESOURCE, GPU_RESOURCE


@dataclass(frozen=True)
class GpuPool:
    """One fleet's GPU node pools, as a pod schedules onto them."""

    node_pool_ids: list[pulumi.Output[str]]
    labels: Mapping[str, str]
    taint: tuple[str, str, str]
    """(key, value, effect)."""
    erdma: bool
    """Whether the nodes advertise `aliyun/erdma` (the eRDMA controller is installed)."""
    gpus_per_node: int

    @property
    def resources(self) -> tuple[str, ...]:
        """Extended resources a pod on this pool requests: `nvidia.com/gpu`, and
        `aliyun/erdma` with eRDMA."""
        return (GPU_RESOURCE, *((ERDMA_RESOURCE,) if self.erdma else ()))


@dataclass(frozen=True)
class AckPlatform:
    """What the job layer needs of the platform (see the module docstring)."""

    provider: k8s.Provider
    cluster_id: pulumi.Output[str]
    kubernetes_version: str
    kubernetes_minor: str
    gpu_pools: Mapping[str, GpuPool]
    system_labels: Mapping[str, str]
    registry: Registry
    storage: KubeStorage
    oss_role_name: pulumi.Output[str]


__all__ = ["AckPlatform", "GpuPool"]
