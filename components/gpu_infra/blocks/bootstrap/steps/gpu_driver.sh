# The NVIDIA driver at exactly DRIVER_VERSION, by DRIVER_ROUTE: auto_install runs Alibaba's
# first-boot script from the intranet mirror (driver, CUDA, cuDNN; it reboots when done; no
# checksum is published for it, so its sha256 is logged),
# grid installs the GRID package from the stack's bucket (its sha256 computed and compared),
# preinstalled only checks the image. A driver that is installed but not loaded yet asks the
# runner for a reboot (request_reboot); the bootstrap resumes after it.

# nouveau_off: nouveau blacklisted; if it is loaded and cannot be unloaded, a reboot (with a
# rebuilt initramfs) is asked for before the GRID installer runs (it refuses to run while
# nouveau is loaded).
nouveau_off() {
  local conf=$ROOT/etc/modprobe.d/gpu-infra-nouveau.conf
  if [ ! -f "$conf" ]; then
    mkdir -p "$(dirname "$conf")"
    printf 'blacklist nouveau\noptions nouveau modeset=0\n' > "$conf"
  fi
  [ -d "$ROOT/sys/module/nouveau" ] || return 0
  modprobe -r nouveau && return 0
  if command -v update-initramfs >/dev/null; then update-initramfs -u; else dracut -f; fi
  request_reboot "nouveau is loaded"
}

install_auto() {
  local dir=$ROOT/root/auto_install source_address
  if [ -f "$dir/auto_install.log" ] && grep -q "INSTALL FAIL" "$dir/auto_install.log"; then
    fail "the driver auto-install failed: see /root/auto_install/auto_install.log"
  fi
  source_address=$(meta source-address)
  source_address=${source_address%%$'\n'*}
  mkdir -p "$dir"
  curl -fsS --retry 5 -o "$dir/$AUTO_INSTALL_SCRIPT" \
    "$source_address$AUTO_INSTALL_PATH/$AUTO_INSTALL_SCRIPT"
  verify_sha256 "the driver auto-install script" "$dir/$AUTO_INSTALL_SCRIPT" ""
  log "auto-install of driver $DRIVER_VERSION, CUDA $CUDA_VERSION, cuDNN $CUDNN_VERSION"
  expect_reboot  # the installer reboots the instance when it is done
  (cd "$dir" && run_installer bash "./$AUTO_INSTALL_SCRIPT" "$DRIVER_VERSION" "$CUDA_VERSION" \
    "$CUDNN_VERSION" FALSE FALSE)
  grep -q "ALL INSTALL OK" "$dir/auto_install.log" ||
    fail "the driver auto-install did not report ALL INSTALL OK"
}

install_grid() {
  local package=$ROOT/root/gpu-infra/grid-driver.run
  nouveau_off
  [ ! -f "$REBOOT_MARK" ] || return 0
  mkdir -p "$(dirname "$package")"
  "$API" oss-get "$GRID_BUCKET" "$GRID_OBJECT" "$package"
  verify_sha256 "the GRID package" "$package" "$GRID_SHA256"
  pkg_install gcc make dkms "$(os_package kernel-headers)"
  run_installer sh "$package" --silent --dkms
}

step_gpu_driver() {
  local current
  if current=$(driver_version); then
    [ "$current" = "$DRIVER_VERSION" ] ||
      fail "driver $current is installed but $DRIVER_VERSION is pinned; replace the node"
    log "driver $current present"
    return 0
  fi
  may_install "the NVIDIA driver $DRIVER_VERSION"
  case $DRIVER_ROUTE in
    auto_install) install_auto ;;
    grid) install_grid ;;
  esac
  [ ! -f "$REBOOT_MARK" ] || return 0
  if current=$(driver_version); then
    [ "$current" = "$DRIVER_VERSION" ] || fail "driver $current installed, $DRIVER_VERSION pinned"
  else
    request_reboot "the driver loads after a reboot"
  fi
}
