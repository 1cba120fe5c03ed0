"""The shared file systems as pulumi-alicloud's nas.FileSystem takes them, and how nodes mount
them (the NFS exports and options): read by the file-system block, the layouts and the node
plans."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FsType:
    """The provider arguments of one kind of file system."""

    file_system_type: str
    protocol_type: str
    storage_type: str
    encrypt_type: int | None
    """encrypt_type with no KMS key: 1 (NAS-managed key) or None (not accepted)."""
    kms_encrypt_type: int | None
    """encrypt_type with a KMS key: 2 (user-managed key) where the provider accepts it."""


FS_TYPES: dict[str, FsType] = {
    # provider docstring: encrypt_type 1 for standard and extreme, 2 (KMS) for extreme only
    "nas_performance": FsType("standard", "NFS", "Performance", 1, None),
    "nas_capacity": FsType("standard", "NFS", "Capacity", 1, None),
    "extreme": FsType("extreme", "NFS", "standard", 1, 2),
    # cpfs+cpfs takes advance_100 or advance_200 (100 / 200 MB/s per TiB baseline)
    "cpfs": FsType("cpfs", "cpfs", "advance_100", None, None),
}
"""Kind (the `shared_fs.kind` config value) -> file_system_type, protocol_type,
storage_type and encryption, as pulumi-alicloud's nas.FileSystem accepts them."""
NFS_OPTIONS = "vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2," \
              "noresvport"
"""Alibaba's recommended NFSv3 mount options for NAS."""
EXPORT_PATHS = {"standard": "/", "extreme": "/share"}
"""Path to mount: general-purpose NAS exports /, Extreme NAS exports /share."""
