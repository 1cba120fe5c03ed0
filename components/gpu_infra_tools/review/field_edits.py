"""Ordinary edits of the shipped stacks, one per stack-file field: the input of the
per-field update-policy table (docs/update-policies.md) and of the change-report tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Cluster = dict[str, Any]
NEW_KEY = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq9t3mVx7rB2cN4dF6gH8jK0lM2nP4qR6sT8uV0wX2y "
           "ml-platform@example")


@dataclass(frozen=True)
class FieldEdit:
    """One edit of one field of a shipped stack (`gpu-infra:cluster` of stacks/Pulumi.*)."""

    field: str
    """The stack-file path edited, e.g. fleet.nodes."""
    stack_name: str
    """The shipped stack edited, e.g. training-prod (stacks/Pulumi.<stack_name>.yaml)."""
    change: str
    """The edit in words, e.g. `8 -> 10`."""
    apply: Callable[[Cluster], None]
    safe_way: str = ""
    """What to do instead, when the edit is dangerous."""


def _set(path: str, value: Any) -> Callable[[Cluster], None]:
    def edit(cluster: Cluster) -> None:
        *parents, leaf = path.split(".")
        node = cluster
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return edit


def _fleet(**changes: Any) -> Callable[[Cluster], None]:
    return lambda cluster: cluster["fleet"].update(changes)


def _disk(**changes: Any) -> Callable[[Cluster], None]:
    return lambda cluster: cluster["storage"]["disks"][0].update(changes)


def _reserved_count(count: int) -> Callable[[Cluster], None]:
    return lambda cluster: cluster["fleet"]["reserved"]["reserved_instances"].update(
        count=count)


EDITS: dict[str, FieldEdit] = {
    "nodes-up": FieldEdit("fleet.nodes", "training-prod", "8 -> 10", _fleet(nodes=10)),
    "nodes-down": FieldEdit(
        "fleet.nodes", "training-prod", "8 -> 6", _fleet(nodes=6),
        "two steps: first `fleet.scale_in_from: 6` (turns deletion protection off on "
        "node-006 and up), apply; then `nodes: 6`, acknowledged (replaces-gpu-nodes)"),
    "scale-in-step-1": FieldEdit("fleet.scale_in_from", "training-prod", "unset -> 6",
                                 _fleet(scale_in_from=6)),
    "instance-type": FieldEdit(
        "fleet.instance_type", "training-prod", "ebmgn7ex.32xlarge -> ebmgn8v.48xlarge",
        _fleet(instance_type="ecs.ebmgn8v.48xlarge"),
        "nodes stop and start in place but keep their first-boot configuration (the old "
        "type's GPU count): replace them one at a time instead; the reserved instances match "
        "the old type and are protected: release the reserved section first, buy new coupons "
        "in a new entry"),
    "instance-type-spot": FieldEdit(
        "fleet.instance_type", "training-dev", "gn7e-c16g1.4xlarge -> gn7e-c16g1.16xlarge",
        _fleet(instance_type="ecs.gn7e-c16g1.16xlarge"),
        "reaches new spot workers only (the scaling configuration; ECS does not change the "
        "type of a preemptible instance): running workers keep the old type, so let the "
        "job finish, then set `nodes` to the on-demand count, apply, and set it back"),
    "image": FieldEdit("fleet.image", "training-prod", "default -> a custom image",
                       _fleet(image={"id": "m-2ze0gpuimage00000001"}),
                       "the system disk is re-imaged (its data is lost) and the node keeps "
                       "its first-boot configuration: replace the nodes one at a time "
                       "(`pulumi up --replace`, `fleet.push_user_data: true`)"),
    "image-scaling": FieldEdit("fleet.image", "inference-prod", "default -> a custom image",
                               _fleet(image={"id": "m-2ze0gpuimage00000001"}),
                               "running instances keep the old image: scale to 0 and back, "
                               "or start an ESS instance refresh"),
    "serving-image": FieldEdit(
        "serving.image", "inference-prod", "serve:latest -> serve:v2",
        _set("serving.image",
             "chat-serve-registry-acr-registry-vpc.cn-hangzhou.cr.aliyuncs.com/chat-serve/"
             "serve:v2"),
        "running instances keep the server they booted: raise the group's desired capacity by "
        "its size, wait until the new instances are in service (each joins the load balancer "
        "once its server answers), lower it back (the oldest leave first, drained)"),
    "serving-model": FieldEdit(
        "serving.model", "inference-prod", "chat -> chat-v2", _set("serving.model", "chat-v2"),
        "running instances keep the model they fetched: roll them as for serving.image, or "
        "upload the new model under a new prefix first (a prefix's files are checked, never "
        "replaced under a running server)"),
    "erdma-off": FieldEdit("fleet.erdma", "training-prod", "auto -> off", _fleet(erdma="off"),
                           "none: the provider fixes the traffic mode at creation"),
    "spot-strategy": FieldEdit(
        "fleet.spot_strategy", "training-dev", "SpotAsPriceGo -> SpotWithPriceLimit",
        _fleet(spot_strategy="SpotWithPriceLimit", spot_price_limit=30.0),
        "reaches new spot workers only (the scaling configuration; an instance's spot "
        "strategy is fixed at creation): running workers keep theirs until ESS replaces them"),
    "reserved-count": FieldEdit(
        "fleet.reserved.reserved_instances.count", "training-prod", "8 -> 10",
        _reserved_count(10),
        "none in place (the count is ForceNew and a reservation cannot be released): buy "
        "the extra coupons outside this stack, or wait for the term to end"),
    "multi-az-policy": FieldEdit(
        "fleet.multi_az_policy", "inference-prod", "COST_OPTIMIZED -> BALANCE",
        _fleet(multi_az_policy="BALANCE", on_demand_percentage_above_base=100),
        "none: ForceNew, and deleting the scaling group releases every instance; build a "
        "second fleet and move traffic"),
    "scaling-limits": FieldEdit("fleet.max_size", "inference-prod", "16 -> 24",
                                _fleet(max_size=24)),
    "scaling-limits-down": FieldEdit(
        "fleet.max_size", "inference-prod", "16 -> 8", _fleet(max_size=8),
        "ESS releases the instances above the new maximum at once: lower it when no more "
        "run (scale in first), or acknowledge (replaces-gpu-nodes)"),
    "disk-size": FieldEdit("storage.disks[].size_gib", "training-prod", "500 -> 600",
                           _disk(size_gib=600),
                           "grows online; the file system grows at the node's next boot "
                           "(or `xfs_growfs /mnt/<disk>` now)"),
    "disk-shrink": FieldEdit("storage.disks[].size_gib", "training-prod", "500 -> 400",
                             _disk(size_gib=400),
                             "none in place: a disk only grows; add a smaller disk under a new "
                             "name, move the data, remove the old one"),
    "disk-iops": FieldEdit("storage.disks[].provisioned_iops", "training-prod",
                           "20000 -> 30000", _disk(provisioned_iops=30000)),
    "disk-keep": FieldEdit("storage.disks[].keep", "training-prod", "false -> true",
                           _disk(keep=True)),
    "shared-fs-off": FieldEdit(
        "storage.shared_fs.enabled", "training-prod", "true -> false",
        _set("storage.shared_fs.enabled", False),
        "copy the data off first and take the NFS entry out of every running node's fstab "
        "(they keep it); the file system is protected in prod, so unprotect it "
        "(`pulumi state unprotect`) once it is empty"),
    "backup-on": FieldEdit("storage.backup.enabled", "training-dev", "default (off) -> true",
                           _set("storage.backup.enabled", True)),
    "backup-retention": FieldEdit("storage.backup.retention_days", "training-prod", "30 -> 90",
                                  _set("storage.backup.retention_days", 90)),
    "backup-vault-key": FieldEdit(
        "storage.backup.vault_key", "training-prod", "default (stack) -> hbr",
        _set("storage.backup.vault_key", "hbr"),
        "a vault's key is fixed at creation: a new key is a new vault, and the old one's "
        "backups go with it (protected in prod). To change the key, back up into a new "
        "vault beside this one and keep this one until its backups expire"),
    "log-retention": FieldEdit("logs.retention_days", "training-prod", "default (180) -> 365",
                               _set("logs.retention_days", 365)),
    "log-retention-down": FieldEdit(
        "logs.retention_days", "training-prod", "default (180) -> 30",
        _set("logs.retention_days", 30),
        "SLS deletes the logs older than 30 days at once: export what you need first"),
    "logs-off": FieldEdit("logs.enabled", "training-prod", "default (true) -> false",
                          _set("logs.enabled", False),
                          "the SLS project and its stores are deleted with every log in them "
                          "(protected in prod): export the logs you need first, then "
                          "`pulumi state unprotect` the project and stores"),
    "kms-on": FieldEdit("security.kms_encryption", "training-dev", "default (off) -> true",
                        _set("security.kms_encryption", True),
                        "none: a system disk's key and a log store's encryption are fixed "
                        "at creation; plan it as a rebuild (the stores start empty)"),
    "public-key": FieldEdit("security.public_key", "training-prod", "a new key",
                            _set("security.public_key", NEW_KEY),
                            "refused while nodes use the key pair: keep the key and add the "
                            "new one to the nodes' authorized_keys"),
    "vpc-cidr": FieldEdit(
        "network.vpc_cidr", "training-prod", "10.20.0.0/16 -> 10.21.0.0/16",
        _set("network.vpc_cidr", "10.21.0.0/16"),
        "none in place: the VPC's CIDR changes only to one that holds its vSwitches; clone the "
        "stack into a new VPC (`gpu-infra clone`) and move the workload"),
    "vpc-cidr-wider": FieldEdit(
        "network.vpc_cidr", "training-prod", "10.20.0.0/16 -> 10.20.0.0/15",
        _set("network.vpc_cidr", "10.20.0.0/15"),
        "the VPC grows in place, and each vSwitch moves to its slot of the wider VPC (a new "
        "vSwitch; the nodes stop and start to move to it): plan a maintenance window"),
    "vswitch-cidr": FieldEdit(
        "network.vswitch_cidrs", "training-prod", "slot /21 -> 10.20.88.0/22 (inside it)",
        _set("network.vswitch_cidrs", {"cn-beijing-l": "10.20.88.0/22"}),
        "none in place: a vSwitch's CIDR is fixed and its replacement may not overlap it; "
        "keep the vSwitch, or clone the stack into a new VPC"),
    "zone-appended": FieldEdit("network.zones", "training-prod", "[l] -> [l, k]",
                               _set("network.zones", ["cn-beijing-l", "cn-beijing-k"])),
    "zone-prepended": FieldEdit(
        "network.zones", "training-prod", "[l] -> [k, l]",
        _set("network.zones", ["cn-beijing-k", "cn-beijing-l"]),
        "append zones, never insert before the first: the first zone holds the training "
        "nodes, their file system and zonal reservations"),
    "cluster-rename": FieldEdit("name", "training-prod", "llm-pretrain -> llm-pretrain2",
                                _set("name", "llm-pretrain2"),
                                "none: every resource name derives from it; clone the "
                                "stack (`gpu-infra clone`) and migrate instead"),
    "global-suffix": FieldEdit("naming.global_suffix", "training-prod", "none -> auto",
                               _set("naming.global_suffix", "auto"),
                               "none on a running stack: the suffix renames every bucket (a "
                               "new, empty bucket), the role, policies, key pair and "
                               "contacts; set it when the stack is created (clone does)"),
    "tags": FieldEdit("tags", "training-prod", "add Team", lambda c: c["tags"].update(
        Team="pretrain")),
    "alarm-threshold": FieldEdit("monitoring.alarms.cpu.threshold", "training-prod",
                                 "default -> 80", _set("monitoring.alarms.cpu.threshold", 80)),
    # ACK (platform: ack): the cluster, its node pools, add-ons and registry
    "ack-version": FieldEdit("ack.kubernetes_version", "training-ack",
                             "1.34.1-aliyun.1 -> 1.35.0-aliyun.1",
                             _set("ack.kubernetes_version", "1.35.0-aliyun.1"),
                             "upgrade the node pools after the control plane, one at a time"),
    "ack-version-down": FieldEdit("ack.kubernetes_version", "training-ack",
                                  "1.34.1-aliyun.1 -> 1.33.4-aliyun.1",
                                  _set("ack.kubernetes_version", "1.33.4-aliyun.1"),
                                  "none: ACK never downgrades; a new cluster (`gpu-infra "
                                  "clone`) on the older version"),
    "ack-nodes-up": FieldEdit("fleet.nodes", "training-ack", "4 -> 6", _fleet(nodes=6)),
    "ack-nodes-down": FieldEdit("fleet.nodes", "training-ack", "4 -> 2", _fleet(nodes=2),
                                "drain the nodes first (`kubectl drain`), then apply, "
                                "acknowledged (replaces-gpu-nodes): ACK picks which go"),
    "ack-new-pool": FieldEdit("fleet.nodes", "training-ack", "4 -> 24 (a second pool)",
                              _fleet(nodes=24)),
    "ack-instance-type": FieldEdit(
        "fleet.instance_type", "training-ack", "gn8v-8x.48xlarge -> ebmgn8v.48xlarge",
        _fleet(instance_type="ecs.ebmgn8v.48xlarge"),
        "running nodes keep the old type: remove them one at a time and let the pool add "
        "nodes of the new type"),
    "ack-instance-types": FieldEdit(
        "fleet.instance_types", "inference-ack", "a fourth fallback type",
        _fleet(instance_types=["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge",
                               "ecs.gn6i-c4g1.xlarge", "ecs.gn6i-c8g1.2xlarge"]),
        "new nodes only; running nodes stay as they are"),
    "ack-disks": FieldEdit("storage.disks[].size_gib", "training-ack", "500 -> 600",
                           _disk(size_gib=600),
                           "new nodes only: running nodes keep their disks; remove them one "
                           "at a time to roll"),
    "ack-driver": FieldEdit("fleet.driver.version", "training-ack", "family pin -> 570.172.08",
                            _fleet(driver={"version": "570.172.08"}),
                            "the label changes on running nodes but ACK installs the driver "
                            "at join: remove and re-add the nodes one at a time"),
    "ack-spot-mix": FieldEdit("fleet.on_demand_percentage_above_base", "inference-ack",
                              "30 -> 50", _fleet(on_demand_percentage_above_base=50),
                              "new nodes only: the autoscaler's next nodes follow it"),
    "ack-scaling-limits": FieldEdit("fleet.max_size", "inference-ack", "16 -> 24",
                                    _fleet(max_size=24)),
    "ack-desired-size": FieldEdit(
        "fleet.desired_size", "inference-ack", "autoscaled -> 3", _fleet(desired_size=3),
        "none in one step: the autoscaler stays on (scaling_config is kept when removed); "
        "disable it in the ACK console first"),
    "ack-pod-vswitch": FieldEdit(
        "network.zones", "inference-ack", "[i, j] -> [i, j, k]",
        _set("network.zones", ["cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k"]),
        "the new pod vSwitch is created but the cluster ignores it: add it to the "
        "terway-eniip config (eni_conf vswitches) by hand"),
    "ack-public-api": FieldEdit("ack.public_api", "inference-ack", "false -> true",
                                _set("ack.public_api", True),
                                "none by the provider (create only): bind an EIP to the API "
                                "server in the ACK console, or reach it from the VPC"),
    "ack-addon-version": FieldEdit(
        "ack.addon_versions", "training-ack", "ack-nvidia-device-plugin v0.17.0 -> v0.18.0",
        _set("ack.addon_versions", {"ack-nvidia-device-plugin": "v0.18.0"})),
    "ack-registry-edition": FieldEdit(
        "registry.edition", "inference-ack", "personal -> enterprise",
        _set("registry.edition", "enterprise"),
        "push the images to the new instance before the namespace goes: create the instance "
        "in one stack, copy the images, then switch"),
    "ack-shared-fs-grow": FieldEdit(
        "storage.shared_fs.capacity_gib", "training-ack", "20480 -> 30720",
        _set("storage.shared_fs.capacity_gib", 30720),
        "the file system grows, but Kubernetes refuses to resize a statically bound claim: "
        "stop the pods that mount it, then `pulumi up --replace` its PersistentVolume (the "
        "claim goes with it; the data stays)"),
    "lb-kind": FieldEdit(
        "load_balancer.kind", "inference-prod", "nlb -> alb", _set("load_balancer.kind", "alb"),
        "turn the NLB's deletion protection off first (NLB console, or "
        "DisableDeletionProtection): the provider's delete does not lift it"),
    "ack-maintenance": FieldEdit("ack.maintenance_window.start_utc", "training-ack",
                                 "18:00 -> 20:00",
                                 _set("ack.maintenance_window.start_utc", "20:00")),
    "ack-system-pool": FieldEdit("ack.system_pool.nodes", "training-ack", "2 -> 3",
                                 _set("ack.system_pool.nodes", 3)),
}
"""Edit name -> edit, in the order the table lists them."""
