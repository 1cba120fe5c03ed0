# eRDMA through the GPU (OFED) path: Alibaba's env_setup.sh --egs with the pinned installer,
# the module in compat mode, nvidia_peermem when present, and the primary interface's MTU
# (ERDMA_MTU: 1400, or 8500 with jumbo frames on).
erdma_devices() {
  find "$ROOT/sys/class/infiniband" -maxdepth 1 -name 'erdma_*' 2>/dev/null | sort
}

step_erdma() {
  local tmp tarball
  if [ -n "$(erdma_devices)" ] && command -v eadm >/dev/null; then
    log "eRDMA driver present"
  else
    may_install "the eRDMA driver"
    tmp=$(mktemp -d)
    tarball=$tmp/${ERDMA_INSTALLER_URL##*/}
    curl -fsS --retry 5 -o "$tarball" "$ERDMA_INSTALLER_URL"
    verify_sha256 "the eRDMA installer" "$tarball" "$ERDMA_INSTALLER_SHA256"
    curl -fsS --retry 5 -o "$tmp/env_setup.sh" "$ERDMA_MIRROR/env_setup.sh"
    log "installing eRDMA $ERDMA_INSTALLER_URL"
    (cd "$tmp" && bash ./env_setup.sh --egs --url "$ERDMA_INSTALLER_URL")
    rm -rf "$tmp"
  fi
  local compat=$ROOT/sys/module/erdma/parameters/compat_mode
  if [ -f "$compat" ] && [ "$(cat "$compat")" = N ]; then
    modprobe -r erdma
  fi
  modprobe erdma compat_mode=Y
  if modinfo nvidia_peermem >/dev/null 2>&1; then
    modprobe nvidia_peermem
  fi
  if [ "$MODE" = bake ]; then
    # the build instance may have no eRDMA interface: the image needs the driver only
    modinfo erdma >/dev/null || fail "no erdma kernel module after the install"
    return 0
  fi
  ip link set dev eth0 mtu "$ERDMA_MTU"
  [ -n "$(erdma_devices)" ] || fail "no eRDMA device after the install"
}
