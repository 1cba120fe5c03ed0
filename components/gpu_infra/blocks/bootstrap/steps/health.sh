# The readiness gate: every check runs, each problem is logged, and any problem fails the
# step (the node is then unhealthy). Every check reads a probe (probe.sh) whose exit status
# counts: a GPU that does not answer, a driver that is not loaded, a hung mount all fail.
# On success: the ready marker, and the cloud side is told.
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
  local count
  count=$(gpu_count) && [ "$count" -eq "$1" ]
}

driver_is() {
  local version
  version=$(driver_version) && [ "$version" = "$1" ]
}

# every_gpu FIELD ALLOWED...: FIELD of every GPU is one of ALLOWED ("[N/A]": not supported).
every_gpu() {
  local field=$1 rows value
  shift
  rows=$(gpu_query "$field") || return 1
  while IFS= read -r value; do
    value=${value#*, GPU-*, }
    case " $* " in *" $value "*) ;; *) return 1 ;; esac
  done <<< "$rows"
}

no_xid_errors() {
  local kernel_log
  kernel_log=$(journalctl -k -b -o cat --no-pager) || return 1
  ! grep -q 'NVRM: Xid' <<< "$kernel_log"
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

mtu_is() {
  [ "$(cat "$ROOT/sys/class/net/eth0/mtu")" = "$1" ]
}

# container_gpus_are COUNT: a container of CHECK_IMAGE (pulled through gpu-infra-pull when the
# node lacks it) started with every GPU lists COUNT of them (`nvidia-smi -L`, which the NVIDIA
# toolkit mounts into it: one "GPU <n>: <name> (UUID: ...)" line each).
container_gpus_are() {
  local listed
  docker image inspect "$CHECK_IMAGE" >/dev/null 2>&1 ||
    bounded "$CHECK_SECONDS" "$BIN_DIR/gpu-infra-pull" "$CHECK_IMAGE" || return 1
  listed=$(bounded "$CHECK_SECONDS" docker run --rm --gpus all "$CHECK_IMAGE" nvidia-smi -L) ||
    return 1
  [ "$(grep -c '^GPU [0-9]*: ' <<< "$listed")" -eq "$1" ]
}

# container_sees_erdma: the same image started with the eRDMA devices (--device
# /dev/infiniband) finds a verbs device (uverbs<n>) there.
container_sees_erdma() {
  local listed
  listed=$(bounded "$CHECK_SECONDS" docker run --rm --device /dev/infiniband "$CHECK_IMAGE" \
    ls /dev/infiniband) || return 1
  grep -q '^uverbs[0-9]' <<< "$listed"
}

fabric_manager_ready() {
  ! has_nvswitch || systemctl is-active --quiet nvidia-fabricmanager
}

all_mounted() {
  local point
  for point in "$@"; do
    is_mounted "$point" || return 1
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
  check "MIG mode off" every_gpu mig.mode.current Disabled "[N/A]"
  check "no uncorrected ECC errors" every_gpu ecc.errors.uncorrected.volatile.total 0 "[N/A]"
  check "no XID errors in the kernel log" no_xid_errors
  check "a CUDA context on each GPU" "$API" gpu-check cuda
  case " ${NVLINK_TYPES[*]} " in
    *" $instance_type "*) check "NVLink links active" "$API" gpu-check nvlink ;;
  esac
  if [ "$ERDMA" = 1 ]; then
    check "eRDMA devices active" erdma_active
    check "eth0 MTU $ERDMA_MTU" mtu_is "$ERDMA_MTU"
  fi
  if [ "$FABRIC_MANAGER" = 1 ]; then
    check "fabric manager where NVSwitch is" fabric_manager_ready
  fi
  if [ -n "$CHECK_IMAGE" ]; then
    check "a container sees the $expected GPU(s)" container_gpus_are "$expected"
    [ "$ERDMA" = 0 ] || check "a container sees the eRDMA devices" container_sees_erdma
  fi
  local mounts=("${DATA_DISKS[@]/#/$DATA_ROOT/}")
  [ -z "$SHARED_FS_SOURCE" ] || mounts+=("$SHARED_FS_MOUNT_POINT")
  check "mounts ${mounts[*]}" all_mounted "${mounts[@]}"
  check "CloudMonitor agent" agent_running
  [ "${#HEALTH_PROBLEMS[@]}" -eq 0 ] || fail "health check: ${HEALTH_PROBLEMS[*]}"
  date -u +%Y-%m-%dT%H:%M:%SZ > "$STATE_DIR/ready"
  report healthy health
}
