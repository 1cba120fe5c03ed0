# Docker Engine at DOCKER_VERSION and the NVIDIA Container Toolkit at NVIDIA_CTK_VERSION, from
# the intranet mirrors of Docker's and NVIDIA's repositories (DOCKER_MIRROR, NVIDIA_CTK_MIRROR),
# then docker set up for the GPUs: `nvidia-ctk runtime configure --runtime=docker` writes the
# nvidia runtime into /etc/docker/daemon.json, and docker restarts when that file changed. Both
# present at their pins (a baked image, a later boot): nothing is installed; another version:
# the step fails (replace the node or rebake its image).

# tool_version TOOL: the version `docker --version` ("Docker version 28.5.2, build ecc6942")
# or `nvidia-ctk --version` ("NVIDIA Container Toolkit CLI version 1.19.1") prints; status 1
# when the tool is not installed or does not answer.
tool_version() {
  local out
  out=$("$1" --version 2>/dev/null) || return 1
  out=${out%%$'\n'*}
  out=${out#* version }
  printf '%s\n' "${out%%,*}"
}

# runtime_repositories: Docker's and NVIDIA's repositories on the intranet mirror, with their
# signing keys (apt reads ASCII-armoured .asc keys named by signed-by).
runtime_repositories() {
  local keys=$ROOT/etc/apt/keyrings codename
  if [ "$(os_id)" = ubuntu ]; then
    codename=$(os_release VERSION_CODENAME)
    mkdir -p "$keys" "$ROOT/etc/apt/sources.list.d"
    curl -fsS --retry 5 -o "$keys/docker.asc" "$DOCKER_MIRROR/linux/ubuntu/gpg"
    curl -fsS --retry 5 -o "$keys/nvidia-container-toolkit.asc" "$NVIDIA_CTK_MIRROR/gpgkey"
    printf 'deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.asc] %s %s stable\n' \
      "$DOCKER_MIRROR/linux/ubuntu" "$codename" > "$ROOT/etc/apt/sources.list.d/docker.list"
    printf 'deb [signed-by=/etc/apt/keyrings/nvidia-container-toolkit.asc] %s /\n' \
      "$NVIDIA_CTK_MIRROR/stable/deb/\$(ARCH)" \
      > "$ROOT/etc/apt/sources.list.d/nvidia-container-toolkit.list"
    apt_lists_stale
  else
    mkdir -p "$ROOT/etc/yum.repos.d"
    printf '[%s]\nname=%s\nbaseurl=%s\ngpgcheck=1\ngpgkey=%s\nenabled=1\n' \
      docker-ce-stable docker-ce-stable "$DOCKER_MIRROR/linux/rhel/8/x86_64/stable" \
      "$DOCKER_MIRROR/linux/rhel/gpg" > "$ROOT/etc/yum.repos.d/docker-ce.repo"
    printf '[%s]\nname=%s\nbaseurl=%s\ngpgcheck=1\ngpgkey=%s\nenabled=1\n' \
      nvidia-container-toolkit nvidia-container-toolkit "$NVIDIA_CTK_MIRROR/stable/rpm/x86_64" \
      "$NVIDIA_CTK_MIRROR/gpgkey" > "$ROOT/etc/yum.repos.d/nvidia-container-toolkit.repo"
  fi
}

# runtime_packages: the pinned package specifications of this system's package manager.
runtime_packages() {
  local package docker=$DOCKER_VERSION ctk=$NVIDIA_CTK_VERSION sep=-
  if [ "$(os_id)" = ubuntu ]; then
    docker="5:$DOCKER_VERSION-1~ubuntu.$(os_release VERSION_ID)~$(os_release VERSION_CODENAME)"
    ctk=$NVIDIA_CTK_VERSION-1 sep='='
  fi
  for package in docker-ce docker-ce-cli; do echo "$package$sep$docker"; done
  for package in nvidia-container-toolkit nvidia-container-toolkit-base \
    libnvidia-container-tools libnvidia-container1; do
    echo "$package$sep$ctk"
  done
}

install_runtime() {
  local docker ctk packages
  docker=$(tool_version docker) || docker=""
  ctk=$(tool_version nvidia-ctk) || ctk=""
  if [ "$docker:$ctk" = "$DOCKER_VERSION:$NVIDIA_CTK_VERSION" ]; then
    log "Docker $docker and the NVIDIA Container Toolkit $ctk present"
    return 0
  fi
  [ -z "$docker" ] || [ "$docker" = "$DOCKER_VERSION" ] ||
    fail "Docker $docker is installed but $DOCKER_VERSION is pinned; replace the node"
  [ -z "$ctk" ] || [ "$ctk" = "$NVIDIA_CTK_VERSION" ] ||
    fail "NVIDIA Container Toolkit $ctk is installed but $NVIDIA_CTK_VERSION is pinned"
  may_install "Docker $DOCKER_VERSION with the NVIDIA Container Toolkit $NVIDIA_CTK_VERSION"
  runtime_repositories
  mapfile -t packages < <(runtime_packages)
  log "installing ${packages[*]}"
  pkg_install "${packages[@]}"
  docker=$(tool_version docker) || fail "docker --version fails after the install"
  ctk=$(tool_version nvidia-ctk) || fail "nvidia-ctk --version fails after the install"
  [ "$docker:$ctk" = "$DOCKER_VERSION:$NVIDIA_CTK_VERSION" ] ||
    fail "installed Docker $docker and toolkit $ctk, pinned $DOCKER_VERSION and $NVIDIA_CTK_VERSION"
}

step_container_runtime() {
  local config=$ROOT/etc/docker/daemon.json before=""
  install_runtime
  [ ! -f "$config" ] || before=$(cat "$config")
  nvidia-ctk runtime configure --runtime=docker --config="$config"
  if [ "$MODE" = bake ]; then
    systemctl enable docker
  elif [ "$(cat "$config")" != "$before" ] || ! systemctl is-active --quiet docker; then
    systemctl enable docker
    systemctl restart docker
    log "docker (re)started with the nvidia runtime"
  fi
}
