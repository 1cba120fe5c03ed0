"""ECS's user-data limit, checked before anything is built: the user data a fleet's nodes
would get, rendered from the stack with the longest values the cloud may assign, must fit
node_stack.USER_DATA_MAX_BYTES; else an ERROR naming the stack field that adds the most.

What grows with the stack file: the data disks (each name once, and the disk step), the
fleet's instance types (one GPU count each), the GRID package's object key, the shared file
system (its step and mount address), the cluster name and node logs (`logs.enabled`: the
step that installs the collector). Everything else is the step files,
fixed per release (tests/test_user_data_size.py plans the largest stack the schema allows).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterable
from dataclasses import replace

from gpu_infra.blocks.bootstrap import BootstrapSpec, NodeRegistry, user_data, user_data_size
from gpu_infra.knowhow import Finding, Level
from gpu_infra.knowhow.node_software import driver_plan
from gpu_infra.nodeplan.plans import NodePlan, gpu_fleet_name
from gpu_infra.schema.compute import TrainingFleet
from gpu_infra_facts.acr import mirror_namespace
from gpu_infra_facts.file_systems import EXPORT_PATHS, FS_TYPES
from gpu_infra_facts.naming import MAX_SUFFIX_LENGTH
from gpu_infra_facts.node_stack import USER_DATA_MAX_BYTES

CLOUD_ID_CHARS = 64
"""Stand-in length of an id the cloud assigns (scaling group `asg-…`, lifecycle hook `ash-…`:
about 24 characters in the ESS API examples; 64 is a margin, as no maximum is documented)."""
BUCKET_NAME_CHARS = 63
"""The longest OSS bucket name (OSS "Bucket naming conventions": 3-63 characters)."""
MOUNT_ADDRESS_CHARS = 253
"""Stand-in length of a file system's mount address: a DNS name, at most 253 characters
(RFC 1035). CPFS exports have none (blocks.storage.filesystem): the nodes do not mount them."""

GROWTH: dict[str, Callable[[BootstrapSpec], BootstrapSpec]] = {
    "storage.disks": lambda spec: replace(spec, data_disks=()),
    "fleet.instance_types": lambda spec: replace(spec, gpu_counts={}),
    "fleet.driver.grid_package": lambda spec: replace(spec, grid=None),
    "storage.shared_fs": lambda spec: replace(spec, shared_fs=None),
    "name": lambda spec: replace(spec, fleet=""),
    "logs.enabled": lambda spec: replace(spec, log_machine_id=None),
    "registry": lambda spec: replace(spec, registry=None, check_image=None),
    "serving": lambda spec: replace(spec, serving=None),
}
"""Stack field -> the spec without what that field adds to the user data."""


def stand_in(length: int, seed: str) -> str:
    """`length` pseudo-random lowercase letters and digits (the same for the same seed): the
    user data is gzip-compressed (blocks.bootstrap.packing), which shrinks a repeated letter
    to almost nothing, so only characters it cannot predict bound what a real value adds."""
    generator = random.Random(seed)
    return "".join(generator.choices(string.ascii_lowercase + string.digits, k=length))


def worst_case_spec(nodes: NodePlan) -> BootstrapSpec:
    """The fleet's bootstrap with the longest mount address, bucket name and ids the cloud
    may assign (stand_in characters); without node tools where the stack has no bucket."""
    cluster = nodes.cluster
    shared = cluster.storage.shared_fs
    export = EXPORT_PATHS.get(FS_TYPES[shared.kind].file_system_type)
    source = f"{stand_in(MOUNT_ADDRESS_CHARS, 'mount')}:{export}" \
        if shared.enabled and export is not None else None
    group, hook = (None, None) if nodes.FIXED_NODES else (
        stand_in(CLOUD_ID_CHARS, "group"), stand_in(CLOUD_ID_CHARS, "hook"))
    address = cluster.registry_address
    registry = NodeRegistry(address, stand_in(CLOUD_ID_CHARS, "registry"),
                            f"{address}/{mirror_namespace(cluster.registry_namespace)}")
    no_bucket = cluster.storage.buckets.purposes == []  # no node tools: the whole bootstrap inline
    return nodes.bootstrap_spec(gpu_fleet_name(cluster.name), shared_fs_source=source,
                                scaling_group_id=group, lifecycle_hook_id=hook,
                                global_suffix=stand_in(MAX_SUFFIX_LENGTH, "suffix"),
                                node_tools_bucket=None if no_bucket
                                else stand_in(BUCKET_NAME_CHARS, "bucket"),
                                registry=registry)


def user_data_too_large(nodes: NodePlan) -> Iterable[Finding]:
    """ERROR: the nodes' user data would be over ECS's limit (raw bytes, before Base64); the
    path is the field that adds the most, the message says what each adds."""
    cluster = nodes.cluster
    if driver_plan(cluster.fleet).route is None:
        return  # nothing to render: driver-route-missing says so
    spec = worst_case_spec(nodes)
    size = user_data_size(user_data(spec))
    if size <= USER_DATA_MAX_BYTES:
        return
    adds = {path: size - user_data_size(user_data(without(spec)))
            for path, without in GROWTH.items()}
    if isinstance(cluster.fleet, TrainingFleet):
        adds["fleet.instance_type"] = adds.pop("fleet.instance_types")
    largest = sorted(adds.items(), key=lambda item: -item[1])
    parts = ", ".join(f"{field} {added:,}" for field, added in largest if added > 0)
    yield Finding("user-data-too-large", Level.ERROR, largest[0][0],
                  f"the nodes' user data would be {size:,} bytes, {size - USER_DATA_MAX_BYTES:,}"
                  f" over ECS's limit of {USER_DATA_MAX_BYTES:,} (bytes the stack adds: "
                  f"{parts}); use fewer or shorter entries")
