"""Real edits of the shipped stacks, for the change-report tests: name -> (stack, edit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Edit = Callable[[dict[str, Any]], None]
NEW_KEY = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq9t3mVx7rB2cN4dF6gH8jK0lM2nP4qR6sT8uV0wX2y "
           "ml-platform@example")


def _fleet(**changes: Any) -> Edit:
    return lambda cluster: cluster["fleet"].update(changes)


def _set(path: str, value: Any) -> Edit:
    def edit(cluster: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        node = cluster
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return edit


def _disk(**changes: Any) -> Edit:
    return lambda cluster: cluster["storage"]["disks"][0].update(changes)


EDITS: dict[str, tuple[str, Edit]] = {
    "nodes-up": ("training-prod", _fleet(nodes=10)),
    "nodes-down": ("training-prod", _fleet(nodes=6)),
    "scale-in-step-1": ("training-prod", _fleet(scale_in_from=6)),
    "disk-size": ("training-prod", _disk(size_gib=600)),
    "disk-iops": ("training-prod", _disk(provisioned_iops=30000)),
    "disk-keep": ("training-prod", _disk(keep=True)),
    "spot-strategy": ("training-dev", _fleet(spot_strategy="SpotWithPriceLimit",
                                             spot_price_limit=30.0)),
    "erdma-off": ("training-prod", _fleet(erdma="off")),
    "kms-on": ("training-dev", _set("security.kms_encryption", True)),
    "instance-type": ("training-prod", _fleet(instance_type="ecs.ebmgn8v.48xlarge")),
    "shared-fs-off": ("training-prod", _set("storage.shared_fs.enabled", False)),
    "public-key": ("training-prod", _set("security.public_key", NEW_KEY)),
    "zone-appended": ("training-prod", _set("network.zones", ["cn-beijing-l", "cn-beijing-k"])),
    "zone-prepended": ("training-prod", _set("network.zones",
                                             ["cn-beijing-k", "cn-beijing-l"])),
    "cluster-rename": ("training-prod", _set("name", "llm-pretrain2")),
    "reserved-count": ("training-prod", lambda c: c["fleet"]["reserved"][
        "reserved_instances"].update(count=10)),
    "multi-az-policy": ("inference-prod", _fleet(multi_az_policy="BALANCE",
                                                 on_demand_percentage_above_base=100)),
    "image": ("training-prod", _fleet(image_id="m-2ze0gpuimage00000001")),
    "tags": ("training-prod", lambda c: c["tags"].update(Team="pretrain")),
    "alarm-threshold": ("training-prod", _set("monitoring.alarms.cpu.threshold", 80)),
    "scaling-limits": ("inference-prod", _fleet(max_size=24)),
}
