# The NVIDIA driver at exactly DRIVER_VERSION, by DRIVER_ROUTE: auto_install runs Alibaba's
# first-boot script from the intranet mirror (driver, CUDA, cuDNN; it reboots when done),
# grid installs the GRID package from the stack's bucket, preinstalled only checks the image.
installed_driver() {
  nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1
}

# reboot_and_resume: reboot once more (at most MAX_REBOOTS times) and continue at the next boot.
# In an image build (bake) the template reboots once after the first run: the second run
# must find the driver.
reboot_and_resume() {
  local count=0 limit=$MAX_REBOOTS
  [ -f "$STATE_DIR/reboots" ] && count=$(cat "$STATE_DIR/reboots")
  [ "$MODE" != bake ] || limit=1
  [ "$count" -lt "$limit" ] || fail "still no driver after $count reboots"
  echo $((count + 1)) > "$STATE_DIR/reboots"
  EXPECT_REBOOT=1
  if [ "$MODE" = bake ]; then
    log "the driver loads after the image build's Reboot task; the next run resumes"
  else
    log "rebooting to load the driver; the bootstrap resumes at the next boot"
    systemctl reboot
  fi
  exit 0
}

install_auto() {
  local dir=$ROOT/root/auto_install source_address code=0
  if [ -f "$dir/auto_install.log" ] && grep -q "INSTALL FAIL" "$dir/auto_install.log"; then
    fail "the driver auto-install failed: see /root/auto_install/auto_install.log"
  fi
  source_address=$(meta source-address | head -n 1)
  mkdir -p "$dir"
  curl -fsS --retry 5 -o "$dir/$AUTO_INSTALL_SCRIPT" \
    "$source_address$AUTO_INSTALL_PATH/$AUTO_INSTALL_SCRIPT"
  log "auto-install of driver $DRIVER_VERSION, CUDA $CUDA_VERSION, cuDNN $CUDNN_VERSION"
  EXPECT_REBOOT=1  # the installer reboots the instance when it is done
  (cd "$dir" && bash "./$AUTO_INSTALL_SCRIPT" "$DRIVER_VERSION" "$CUDA_VERSION" \
    "$CUDNN_VERSION" FALSE FALSE) || code=$?
  EXPECT_REBOOT=0
  [ "$code" -eq 0 ] || fail "the driver auto-install exited with $code"
  grep -q "ALL INSTALL OK" "$dir/auto_install.log" ||
    fail "the driver auto-install did not report ALL INSTALL OK"
}

install_kernel_build_tools() {
  if command -v apt-get >/dev/null; then
    pkg_install gcc make dkms "linux-headers-$(uname -r)"
  else
    pkg_install gcc make dkms "kernel-devel-$(uname -r)"
  fi
}

install_grid() {
  local package=$ROOT/root/gpu-infra/grid-driver.run
  mkdir -p "$(dirname "$package")"
  "$API" oss-get "$GRID_BUCKET" "$GRID_OBJECT" "$package"
  if [ -n "$GRID_SHA256" ]; then
    echo "$GRID_SHA256  $package" | sha256sum -c - >/dev/null ||
      fail "the GRID package does not match its pinned sha256"
  fi
  install_kernel_build_tools
  sh "$package" --silent --dkms
}

step_gpu_driver() {
  local current
  current=$(installed_driver || true)
  if [ "$current" = "$DRIVER_VERSION" ]; then
    log "driver $current present"
    return 0
  fi
  [ -z "$current" ] ||
    fail "driver $current is installed but $DRIVER_VERSION is pinned; replace the node"
  may_install "the NVIDIA driver $DRIVER_VERSION"
  case $DRIVER_ROUTE in
    auto_install) install_auto ;;
    grid) install_grid ;;
  esac
  current=$(installed_driver || true)
  [ -n "$current" ] || reboot_and_resume
  [ "$current" = "$DRIVER_VERSION" ] || fail "driver $current installed, $DRIVER_VERSION pinned"
}
