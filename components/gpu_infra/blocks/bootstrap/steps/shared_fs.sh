# The shared file system (NAS/CPFS over NFS) at SHARED_FS_MOUNT_POINT, in /etc/fstab with
# _netdev and nofail so a boot never waits on it; the mount is bounded (MOUNT_SECONDS): a
# hard NFS mount that does not answer fails the step instead of blocking the bootstrap.
MOUNT_SECONDS=120

step_shared_fs() {
  command -v mount.nfs >/dev/null || pkg_install "$(os_package nfs)"
  mkdir -p "$ROOT$SHARED_FS_MOUNT_POINT"
  grep -q " $SHARED_FS_MOUNT_POINT " "$ROOT/etc/fstab" ||
    echo "$SHARED_FS_SOURCE $SHARED_FS_MOUNT_POINT nfs $SHARED_FS_OPTIONS,_netdev,nofail 0 0" \
      >> "$ROOT/etc/fstab"
  is_mounted "$SHARED_FS_MOUNT_POINT" || bounded "$MOUNT_SECONDS" \
    mount -t nfs -o "$SHARED_FS_OPTIONS" "$SHARED_FS_SOURCE" "$SHARED_FS_MOUNT_POINT"
}

# step_shared_fs_off: a fleet without a shared file system keeps none: the entry an earlier
# configuration wrote is taken out of /etc/fstab and the mount is detached (lazily: a hung
# hard mount cannot block it).
step_shared_fs_off() {
  if grep -q " $SHARED_FS_MOUNT_POINT nfs " "$ROOT/etc/fstab"; then
    sed -i "\\# $SHARED_FS_MOUNT_POINT nfs #d" "$ROOT/etc/fstab"
    log "removed the $SHARED_FS_MOUNT_POINT entry from /etc/fstab"
  fi
  if is_mounted "$SHARED_FS_MOUNT_POINT"; then
    umount -l "$SHARED_FS_MOUNT_POINT"
  fi
}
