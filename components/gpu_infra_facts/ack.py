"""ACK (managed Kubernetes) facts: cluster specs, versions, node labels and taints, and the
add-ons gpu-infra installs, each with its source and whether it is confirmed.

Sources:
- TF: github.com/aliyun/terraform-provider-alicloud at 81c43b6 (2026-08-21), the line
  pulumi-alicloud 4.0.0 bridges; `website/docs/r/cs_kubernetes_node_pool.html.markdown`
  (its `cluster_addons` example, lines 394-431: the add-on names and config keys below
  marked "TF example") and `website/docs/r/cs_managed_kubernetes.html.markdown` (line 656:
  `logtail-ds` takes `IngressDashboardEnabled` and `sls_project_name`).
- ACK docs: "Support for Kubernetes versions" (help.aliyun.com/en/ack/ack-managed-and-ack-
  dedicated/user-guide/support-for-kubernetes-versions, read 2026-12-01): versions are
  `x.y.z-aliyun.n`, every minor from 1.31 on, creation on the three newest minors.
- ACK docs: "Specify an NVIDIA driver version for nodes" (document_detail/207292): the node
  label `ack.aliyun.com/nvidia-driver-version`, read when a node joins; an unsupported version
  silently falls back to the default.
- Terway's `NetworkPolicy` config key: TF `website/docs/r/cs_managed_kubernetes.html.markdown`
  line 280 and `cs_kubernetes_node_pool.html.markdown` line 400 (terway-eniip,
  `"NetworkPolicy": "false"` in the examples); ACK "Use network policies in ACK clusters"
  (help.aliyun.com/en/ack/ack-managed-and-ack-dedicated/user-guide/use-network-policies):
  Terway enforces Kubernetes NetworkPolicy (with Calico's Felix) on nodes in shared ENI mode.
  That `"true"` turns enforcement on is read from the key's name (the examples only turn it
  off): UNCONFIRMED.
- ACK docs: "Use eRDMA in ACK clusters": `ack-erdma-controller` with
  `{"agent":{"preferDriver":"ofed","allocateAllDevices":true}}`; pods request `aliyun/erdma`.

Add-on versions are pinned here and may be overridden per stack (`ack.addon_versions`); the
versions are UNCONFIRMED (no public list of the versions a region offers was at hand): the
program checks every pinned name and version against what the cluster offers
(`cs.get_kubernetes_addons`) before it installs one, so a wrong name or version stops
`pulumi preview`/`up` with one line naming the add-on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

KUBERNETES_VERSION_PATTERN: Final = r"^1\.(?P<minor>\d+)\.(?P<patch>\d+)-aliyun\.\d+$"
"""ACK versions: `x.y.z-aliyun.n` (ACK "Support for Kubernetes versions")."""
KUBERNETES_MINORS: Final = (33, 34, 35)
"""Minors ACK creates clusters with (the three newest; 1.33-1.35 listed as released or in
grayscale on the ACK page read 2026-12-01). The exact patch releases a region offers are
UNCONFIRMED: `pulumi preview` fails on a version ACK does not offer."""
DEFAULT_SERVICE_CIDR: Final = "172.21.0.0/20"
"""The service CIDR of the provider's ACK examples (TF cs_kubernetes_addon docs)."""
SERVICE_CIDR_RANGES: Final = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
SERVICE_CIDR_PREFIXES: Final = (16, 24)
"""What ACK accepts as a cluster's service CIDR: a block inside one of SERVICE_CIDR_RANGES
with a mask from /16 to /24 (10.0.0.0/16-24, 172.16-31.0.0/16-24, 192.168.0.0/16-24: the
Alibaba SDK docstrings of the cluster's service CIDR, shared/reference/turn4-facts.md §2)."""

DRIVER_VERSION_LABEL: Final = "ack.aliyun.com/nvidia-driver-version"
"""Node label that pins the NVIDIA driver ACK installs when a GPU node joins."""
GPU_TAINT: Final = ("nvidia.com/gpu", "true", "NoSchedule")
"""Taint on every GPU pool (key, value, effect), as ComputeNest's ACK GPU template uses: only
pods that tolerate it (GPU jobs) land on GPU nodes."""
POOL_LABEL: Final = "gpu-infra/pool"
"""Label with the pool's role (`system` or the GPU fleet's name) on every node."""
GPU_RESOURCE: Final = "nvidia.com/gpu"
"""Extended resource the NVIDIA device plugin advertises."""
ERDMA_RESOURCE: Final = "aliyun/erdma"
"""Extended resource the eRDMA controller advertises (pods request it)."""
CONTROL_PLANE_LOG_COMPONENTS: Final = ("apiserver", "kcm", "scheduler", "ccm",
                                       "controlplane-events")
"""`control_plane_log_components` the provider documents (cs.ManagedKubernetes)."""
CONTROL_PLANE_LOG_TTL_DAYS: Final = 30
"""`control_plane_log_ttl`, the provider's default."""


@dataclass(frozen=True)
class AddonFact:
    """One ACK add-on gpu-infra installs."""

    name: str
    version: str
    """Pinned version (UNCONFIRMED, see the module docstring)."""
    purpose: str
    config: dict[str, Any] = field(default_factory=dict)
    """Config keys (JSON) the source documents; {} for none."""
    source: str = "TF example"
    confirmed: bool = True
    """Whether the name and the config keys are documented (the version never is)."""
    at_creation: bool = False
    """Also listed in the cluster's `addons` (create only): the network and storage add-ons a
    node needs before it turns Ready."""


ADDONS: Final = {addon.name: addon for addon in (
    AddonFact("terway-controlplane", "v1.13.0", "Terway's managed control plane",
              {"ENITrunking": "true"}, at_creation=True),
    AddonFact("terway-eniip", "v1.13.0", "pod IPs from the pod vSwitches (Terway ENI-IP)",
              {"NetworkPolicy": "true", "ENITrunking": "true", "IPVlan": "false"},
              at_creation=True),
    AddonFact("csi-plugin", "v1.33.1", "NAS, CPFS, OSS and disk volumes", at_creation=True),
    AddonFact("managed-csiprovisioner", "v1.33.1", "dynamic disk and NAS volumes",
              at_creation=True),
    AddonFact("ack-nvidia-device-plugin", "v0.17.0", "GPUs as nvidia.com/gpu",
              source="ACK docs", confirmed=True),
    AddonFact("ack-erdma-controller", "v1.2.0", "eRDMA devices as aliyun/erdma (OFED driver)",
              {"agent": {"preferDriver": "ofed", "allocateAllDevices": True}},
              source="ACK docs 'Use eRDMA in ACK clusters'"),
    AddonFact("ack-node-problem-detector", "v1.2.26",
              "GPU faults (XID, SXID) as Kubernetes events and node conditions, the faulty "
              "GPU fenced (with ack-nvidia-device-plugin 0.17.0 or later), spot notices",
              {"sls_project_name": ""}),
    AddonFact("loongcollector", "v3.0.12", "container and node logs to SLS",
              {"IngressDashboardEnabled": "false"}),
    AddonFact("arms-prometheus", "v1.1.20", "Managed Prometheus with the GPU exporter metrics",
              {"prometheusMode": "default"}),
    AddonFact("managed-aliyun-acr-credential-helper", "v23.02.06.1",
              "image pulls from the stack's ACR without a pull secret per namespace"),
)}
"""Add-ons by name. `ack-nvidia-device-plugin` is named in the ACK GPU docs but its config
keys are not: it gets none. The spot-notice condition of ack-node-problem-detector is
UNCONFIRMED (engines-and-operations.md section 1)."""
GPU_ADDONS: Final = ("ack-nvidia-device-plugin",)
"""Installed with any GPU pool."""
ERDMA_ADDONS: Final = ("ack-erdma-controller",)
"""Installed when a GPU pool uses eRDMA."""
LOG_ADDONS: Final = ("loongcollector", "ack-node-problem-detector")
"""Add-ons given the stack's SLS project as `sls_project_name` (TF's logtail-ds example key;
UNCONFIRMED for these two): the log add-on collects into it, the problem detector sends its
node events there."""

NPD_FENCING_SINCE: Final = "v1.2.24"
"""The oldest ack-node-problem-detector that fences a faulty GPU: with ack-nvidia-device-plugin
0.17.0 or later it writes the GPU into a quarantine file the device plugin reads, so no new
pod gets that GPU; the node itself is not cordoned or tainted, and fencing is not repair (the
node keeps running and billing). Source: ACK "GPU anomaly detection and automatic fencing"
(alibabacloud.com/help/en/doc-detail/2773467.html, updated 2025-12-04, and 456446.html,
updated 2026-02-12; an older edition, updated 2025-06-24, says 1.2.26): NPD reads XIDs from
/var/log/messages or /var/log/syslog and reports each one once (not again after a reboot)."""
EVENT_STORE: Final = "k8s-event"
"""Log store of the cluster's Kubernetes events (the node problem detector's among them) in
the SLS project given to ack-node-problem-detector (`sls_project_name`). UNCONFIRMED: the
name of ACK's event-center store and that the add-on writes there with that key."""
EVENT_REASON_KEY: Final = "eventId.reason"
EVENT_NODE_KEY: Final = "eventId.involvedObject.name"
"""Keys of an event's reason and of the object (the node) it is about in EVENT_STORE.
UNCONFIRMED: the layout of ACK's event log (each event as JSON under `eventId`)."""
NPD_FAULT_XIDS: Final = (48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140)
"""The XIDs that are GPU faults (double-bit ECC 48, row remapping 63/64, NVLink 74, fallen off
the bus 79, ...), the same list as the node check's (CRITICAL_XIDS of gpu_infra_health.py:
tests keep them equal); application XIDs (13, 31, 43, 45) are not faults."""
NPD_GPU_FAULT_REASONS: Final = tuple(f"NvidiaXID{code}Error" for code in NPD_FAULT_XIDS)
"""Event reasons of ack-node-problem-detector's GPU check items for those XIDs.
UNCONFIRMED: the `NvidiaXID<code>Error` spelling (the ACK page above names the check items
but no spelling was at hand); a wrong spelling matches nothing, so the alarm stays silent:
after the first `pulumi up`, compare with `kubectl get events -A | grep -i xid` on a node
that had one, or with the store's reasons (`* | select distinct "eventId.reason"`)."""
