# NVIDIA fabric manager at exactly the driver version, on nodes whose GPUs sit on NVSwitch
# (detected: /proc/driver/nvidia-nvswitch/devices is not empty). Packages come from NVIDIA's
# CUDA repository (needs internet egress).
has_nvswitch() {
  [ -n "$(ls -A "$ROOT/proc/driver/nvidia-nvswitch/devices" 2>/dev/null)" ]
}

fabric_manager_version() {
  nv-fabricmanager --version 2>/dev/null | grep -o '[0-9][0-9.]*$' | head -n 1
}

add_cuda_repository() {
  local keyring
  if command -v apt-get >/dev/null; then
    keyring=$(mktemp)
    curl -fsS --retry 5 -o "$keyring" "$CUDA_REPO_UBUNTU/cuda-keyring_1.1-1_all.deb"
    dpkg -i "$keyring"
    apt-get update -q
  else
    dnf config-manager --add-repo "$CUDA_REPO_RHEL/cuda-rhel8.repo"
  fi
}

# In an image build the package is installed whether or not the build instance has NVSwitch
# (the nodes may); it starts on nodes only.
step_fabric_manager() {
  if [ "$MODE" != bake ] && ! has_nvswitch; then
    log "no NVSwitch on this node: fabric manager not needed"
    return 0
  fi
  if [ "$(fabric_manager_version || true)" != "$DRIVER_VERSION" ]; then
    may_install "fabric manager $DRIVER_VERSION"
    add_cuda_repository
    if command -v apt-get >/dev/null; then
      pkg_install "nvidia-fabricmanager-${DRIVER_VERSION%%.*}=$DRIVER_VERSION-1"
    else
      pkg_install "nvidia-fabric-manager-$DRIVER_VERSION-1"
    fi
  fi
  if [ "$MODE" = bake ]; then
    systemctl enable nvidia-fabricmanager
  else
    systemctl enable --now nvidia-fabricmanager
  fi
  [ "$(fabric_manager_version || true)" = "$DRIVER_VERSION" ] ||
    fail "fabric manager does not match driver $DRIVER_VERSION"
}
