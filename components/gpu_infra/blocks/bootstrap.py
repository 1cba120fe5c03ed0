"""The nodes' first-boot script: format and mount the data disks, mount the shared file
system. Fixed nodes and scaling configurations get the same script."""

from __future__ import annotations

from collections.abc import Sequence

DATA_ROOT = "/mnt"
"""Data disk `name` is mounted at /mnt/<name>; the shared file system at /mnt/shared."""

_MOUNT_DISKS = """\
# Data disks, in the order they are attached, go to: {mount_points}
root_disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)")
mount_points=({mount_points})
i=0
for disk in $(lsblk -dnpo NAME,TYPE | awk '$2 == "disk" {{print $1}}'); do
  [ "$(basename "$disk")" = "$root_disk" ] && continue
  [ "$i" -lt "${{#mount_points[@]}}" ] || break
  blkid "$disk" >/dev/null || mkfs.xfs -q "$disk"
  mkdir -p "${{mount_points[$i]}}"
  uuid=$(blkid -s UUID -o value "$disk")
  grep -q "$uuid" /etc/fstab || \\
    echo "UUID=$uuid ${{mount_points[$i]}} xfs defaults,nofail 0 2" >> /etc/fstab
  mountpoint -q "${{mount_points[$i]}}" || mount "${{mount_points[$i]}}"
  i=$((i + 1))
done"""


def bootstrap_script(disk_names: Sequence[str], shared_fs_mount: str | None = None) -> str:
    """A bash script that mounts each data disk at /mnt/<name> (formatting it as XFS the
    first time) and runs `shared_fs_mount` (shell lines from
    storage.filesystem.mount_command) if given. Safe to run again on reboot."""
    lines = ["#!/bin/bash", "# gpu-infra node bootstrap", "set -euo pipefail"]
    if disk_names:
        lines.append(_MOUNT_DISKS.format(
            mount_points=" ".join(f"{DATA_ROOT}/{name}" for name in disk_names)))
    if shared_fs_mount:
        lines += ["# Shared file system", shared_fs_mount]
    return "\n".join(lines) + "\n"
