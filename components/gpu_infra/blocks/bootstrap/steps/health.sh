# The readiness gate: every check runs, each problem is logged, and any problem fails the
# step (the node is then unhealthy). On success: the ready marker, and the cloud side is told.
check() {
  local what=$1
  shift
  if "$@"; then
    log "check ok: $what"
  else
    log "check FAILED: $what"
    HEALTH_PROBLEMS+=("$what")
  fi
}

gpu_count_is() {
  [ "$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)" -eq "$1" ]
}

driver_is() {
  [ "$(installed_driver)" = "$1" ]
}

erdma_active() {
  local device state found=0
  for device in $(erdma_devices); do
    state=$(cat "$device/ports/1/state")
    [[ $state == *ACTIVE* ]] || return 1
    found=1
  done
  [ "$found" -eq 1 ]
}

fabric_manager_ready() {
  ! has_nvswitch || systemctl is-active --quiet nvidia-fabricmanager
}

all_mounted() {
  local point
  for point in "$@"; do
    mountpoint -q "$point" || return 1
  done
}

step_health() {
  local instance_type expected
  HEALTH_PROBLEMS=()
  instance_type=$(meta instance/instance-type)
  expected=${GPU_COUNTS[$instance_type]:-}
  [ -n "$expected" ] || fail "instance type $instance_type is not one of the fleet's"
  check "$expected GPU(s) of $instance_type" gpu_count_is "$expected"
  check "driver $DRIVER_VERSION" driver_is "$DRIVER_VERSION"
  if [ "$ERDMA" = 1 ]; then
    check "eRDMA devices active" erdma_active
  fi
  if [ "$FABRIC_MANAGER" = 1 ]; then
    check "fabric manager where NVSwitch is" fabric_manager_ready
  fi
  check "mounts ${MOUNTS[*]}" all_mounted "${MOUNTS[@]}"
  check "CloudMonitor agent" agent_running
  [ "${#HEALTH_PROBLEMS[@]}" -eq 0 ] || fail "health check: ${HEALTH_PROBLEMS[*]}"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$STATE_DIR/ready"
  rm -f "$STATE_DIR/unhealthy"
  report healthy health
}
