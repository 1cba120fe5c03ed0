# NVIDIA fabric manager at exactly the driver version, on nodes whose GPUs sit on NVSwitch
# (detected: /proc/driver/nvidia-nvswitch/devices is not empty). Packages come from NVIDIA's
# CUDA repository (needs internet egress).
has_nvswitch() {
  [ -n "$(ls -A "$ROOT/proc/driver/nvidia-nvswitch/devices" 2>/dev/null)" ]
}

fabric_manager_version() {
  local out
  out=$(nv-fabricmanager --version) || return 1
  printf '%s\n' "${out##* }"
}

# add_cuda_repository: NVIDIA's repository of this OS release (ubuntu2204, ubuntu2404; RHEL 8
# for Alibaba Cloud Linux 3).
add_cuda_repository() {
  local keyring release
  if [ "$(os_id)" = ubuntu ]; then
    release=$(os_release VERSION_ID)
    keyring=$(mktemp)
    curl -fsS --retry 5 -o "$keyring" \
      "$CUDA_REPOS/ubuntu${release//./}/x86_64/cuda-keyring_1.1-1_all.deb"
    dpkg -i "$keyring"
    apt_lists_stale
  else
    dnf config-manager --add-repo "$CUDA_REPOS/rhel8/x86_64/cuda-rhel8.repo"
  fi
}

# In an image build the package is installed whether or not the build instance has NVSwitch
# (the nodes may); it starts on nodes only.
step_fabric_manager() {
  if [ "$MODE" != bake ] && ! has_nvswitch; then
    log "no NVSwitch on this node: fabric manager not needed"
    return 0
  fi
  local version=""
  version=$(fabric_manager_version 2>/dev/null) || version=""
  if [ "$version" != "$DRIVER_VERSION" ]; then
    may_install "fabric manager $DRIVER_VERSION"
    add_cuda_repository
    pkg_install "$(os_package fabric-manager)"
  fi
  if [ "$MODE" = bake ]; then
    systemctl enable nvidia-fabricmanager
  else
    systemctl enable --now nvidia-fabricmanager
  fi
  version=$(fabric_manager_version) || fail "nv-fabricmanager --version failed after the install"
  [ "$version" = "$DRIVER_VERSION" ] ||
    fail "fabric manager $version does not match driver $DRIVER_VERSION"
}
