# Data disks, in the order they are attached, are formatted (XFS, first time only) and mounted
# at MOUNT_POINTS; /etc/fstab keeps them across reboots.
step_data_disks() {
  local root_disk disk uuid i=0
  root_disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)")
  for disk in $(lsblk -dnpo NAME,TYPE | awk '$2 == "disk" {print $1}'); do
    [ "$(basename "$disk")" = "$root_disk" ] && continue
    [ "$i" -lt "${#MOUNT_POINTS[@]}" ] || break
    blkid "$disk" >/dev/null || mkfs.xfs -q "$disk"
    mkdir -p "$ROOT${MOUNT_POINTS[$i]}"
    uuid=$(blkid -s UUID -o value "$disk")
    grep -q "$uuid" "$ROOT/etc/fstab" ||
      echo "UUID=$uuid ${MOUNT_POINTS[$i]} xfs defaults,nofail 0 2" >> "$ROOT/etc/fstab"
    mountpoint -q "${MOUNT_POINTS[$i]}" || mount "${MOUNT_POINTS[$i]}"
    i=$((i + 1))
  done
  [ "$i" -eq "${#MOUNT_POINTS[@]}" ] || fail "found $i of ${#MOUNT_POINTS[@]} data disks"
}
