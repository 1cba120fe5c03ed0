# The shared file system (NAS/CPFS over NFS) at SHARED_FS_MOUNT_POINT, in /etc/fstab with
# _netdev so it comes back after a reboot.
step_shared_fs() {
  command -v mount.nfs >/dev/null || pkg_install nfs-common 2>/dev/null || pkg_install nfs-utils
  mkdir -p "$ROOT$SHARED_FS_MOUNT_POINT"
  grep -q " $SHARED_FS_MOUNT_POINT " "$ROOT/etc/fstab" ||
    echo "$SHARED_FS_SOURCE $SHARED_FS_MOUNT_POINT nfs $SHARED_FS_OPTIONS,_netdev 0 0" >> "$ROOT/etc/fstab"
  mountpoint -q "$SHARED_FS_MOUNT_POINT" ||
    mount -t nfs -o "$SHARED_FS_OPTIONS" "$SHARED_FS_SOURCE" "$SHARED_FS_MOUNT_POINT"
}
