# Data disks by name, never by device order: the ECS disk name of each one is the stack's disk
# name (instance metadata disks/<serial>/name), and its device is the one whose serial is
# <serial> (the disk id without d-; /dev/disk/by-id/virtio-<serial>, or nvme-..._<serial> on
# NVMe types). Separate disks are attached after the instance boots, so each is waited for
# (DISK_WAIT_SECONDS). First use formats it (XFS); /etc/fstab mounts it by file-system UUID
# at DATA_ROOT/<name> across reboots; every boot grows the file system to the disk's size
# (after an online resize; `xfs_growfs /mnt/<name>` does it at once).

# disk_serial NAME: the serial of the attached disk named NAME, from instance metadata.
disk_serial() {
  local serials serial
  serials=$(meta disks/ 2>/dev/null) || return 1
  for serial in $serials; do
    serial=${serial%/}
    if [ "$(meta "disks/$serial/name" 2>/dev/null)" = "$1" ]; then
      echo "$serial"
      return 0
    fi
  done
  return 1
}

# disk_device SERIAL: the block device of the disk with that serial, once udev has linked it.
disk_device() {
  local link
  for link in "$ROOT/dev/disk/by-id/virtio-$1" "$ROOT"/dev/disk/by-id/nvme-*_"$1"; do
    if [ -e "$link" ]; then
      readlink -f "$link"
      return 0
    fi
  done
  return 1
}

# wait_for WHAT COMMAND...: COMMAND's output, polled every DISK_POLL_SECONDS until it answers
# or DISK_WAIT_SECONDS have passed (then the node is unhealthy).
wait_for() {
  local what=$1 waited=0 answer
  shift
  until answer=$("$@"); do
    [ "$waited" -lt "$DISK_WAIT_SECONDS" ] ||
      fail "$what: not attached after ${DISK_WAIT_SECONDS}s (instance metadata disks/)"
    [ "$waited" -gt 0 ] || log "waiting for $what"
    sleep "$DISK_POLL_SECONDS"
    waited=$((waited + DISK_POLL_SECONDS))
  done
  echo "$answer"
}

# format_if_blank DEVICE: XFS on a device blkid finds nothing on (its status 2); any other
# blkid failure stops the step rather than format a disk that may hold data.
format_if_blank() {
  local code=0
  blkid "$1" >/dev/null || code=$?
  case $code in
    0) ;;
    2) mkfs.xfs -q "$1" ;;
    *) fail "blkid $1 exited $code" ;;
  esac
}

step_data_disks() {
  local name serial device uuid mount_point
  for name in "${DATA_DISKS[@]}"; do
    serial=$(wait_for "data disk $name" disk_serial "$name")
    device=$(wait_for "the device of data disk $name (serial $serial)" disk_device "$serial")
    mount_point=$DATA_ROOT/$name
    format_if_blank "$device"
    mkdir -p "$ROOT$mount_point"
    uuid=$(blkid -s UUID -o value "$device")
    grep -q "$uuid" "$ROOT/etc/fstab" ||
      echo "UUID=$uuid $mount_point xfs defaults,nofail 0 2" >> "$ROOT/etc/fstab"
    is_mounted "$mount_point" || mount "$mount_point"
    xfs_growfs "$mount_point" >/dev/null
    log "data disk $name (d-$serial, $device) at $mount_point"
  done
}
