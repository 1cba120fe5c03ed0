# shellcheck shell=bash
# probe.sh: the node library every gpu-infra program sources (bootstrap.sh and its steps,
# gpu-infra-peers, the timers' checks). Installed as /opt/gpu-infra/probe.sh after config.sh.
# Rules: the exit status of every external command is checked; output is read only from a
# command that succeeded, and only in a machine format (nvidia-smi --query-gpu ... csv);
# error text is never parsed (a row that is not data fails the probe).
#
#   log MESSAGE...              timestamped "[${CURRENT_STEP}] MESSAGE" to $LOG_FILE and fd 3
#                               (stderr unless the caller points fd 3 elsewhere)
#   fail MESSAGE...             log "ERROR: MESSAGE" (and to stderr: a step's stderr is
#                               what its failure event carries), exit 1
#   meta ITEM                   one instance metadata item (hardened mode: a token first)
#   bounded SECONDS COMMAND...  COMMAND, killed after SECONDS (status 124): anything that may
#                               hang on the network (a hard NFS mount)
#   is_mounted PATH             PATH is a mount point; false when `mountpoint` hangs past
#                               PROBE_SECONDS (a hung hard NFS mount)
#   gpu_query FIELD...          one CSV row per GPU: "index, uuid, FIELD..." (nvidia-smi
#                               --query-gpu, nounits); status 1 when nvidia-smi fails
#                               ("No devices were found" exits non-zero) or a row is not an
#                               index and a GPU-uuid ("Unable to determine the device handle")
#   gpu_count                   how many GPUs answer gpu_query; status 1 when any does not
#   driver_version              the loaded kernel module's version (/sys/module/nvidia/
#                               version); status 1 when no NVIDIA driver is loaded
#   verify_sha256 WHAT FILE PINNED   FILE's sha256 computed and logged; fail unless it equals
#                               PINNED (when one is pinned: an empty PINNED only logs it)
#   os_release KEY              one /etc/os-release value (VERSION_ID: 22.04, 24.04, 3)
#   os_id                       ubuntu | alinux (os_release ID; Alibaba Cloud Linux 3 is
#                               alinux)
#   os_package KIND             this OS's package name for KIND: nfs, kernel-headers,
#                               fabric-manager (at DRIVER_VERSION)
#   pkg_install PACKAGE...      the OS's package manager (apt-get on Ubuntu, dnf on Alibaba
#                               Cloud Linux), non-interactive; apt-get updates its
#                               lists once per run and waits up to PKG_LOCK_SECONDS for the
#                               dpkg lock (unattended-upgrades holds it at first boot)
#   apt_lists_stale             the next pkg_install updates apt's lists again (a repository
#                               was added)
ROOT=${GPU_INFRA_ROOT:-}
STATE_DIR=$ROOT/var/lib/gpu-infra
LOG_DIR=$ROOT/var/log/gpu-infra
LOG_FILE=${LOG_FILE:-$LOG_DIR/bootstrap.log}
BIN_DIR=$ROOT/opt/gpu-infra/bin
ETC_DIR=$ROOT/etc/gpu-infra
API=${GPU_INFRA_API:-$BIN_DIR/gpu-infra-api}
CURRENT_STEP=${CURRENT_STEP:-start}
PROBE_SECONDS=${PROBE_SECONDS:-20}
PKG_LOCK_SECONDS=${PKG_LOCK_SECONDS:-600}
APT_UPDATED=0
{ true >&3; } 2>/dev/null || exec 3>&2
mkdir -p "$LOG_DIR"

log() {
  printf '%s [%s] %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$CURRENT_STEP" "$*" |
    tee -a "$LOG_FILE" >&3
}

fail() {
  log "ERROR: $*"
  printf 'ERROR: %s\n' "$*" >&2
  exit 1
}

meta() {
  local token
  token=$(curl -fsS --retry 5 --retry-delay 2 -X PUT "$METADATA_TOKEN_URL" \
    -H "X-aliyun-ecs-metadata-token-ttl-seconds: 300")
  curl -fsS --retry 5 --retry-delay 2 -H "X-aliyun-ecs-metadata-token: $token" \
    "$METADATA_URL/$1"
}

bounded() {
  local seconds=$1
  shift
  timeout -k 5 "$seconds" "$@"
}

is_mounted() {
  bounded "$PROBE_SECONDS" mountpoint -q "$1"
}

gpu_query() {
  local fields rows
  fields=$(IFS=,; echo "index,uuid${*:+,$*}")
  rows=$(bounded "$PROBE_SECONDS" nvidia-smi --query-gpu="$fields" \
    --format=csv,noheader,nounits) || return 1
  [ -n "$rows" ] || return 1
  printf '%s\n' "$rows" | grep -Ev '^[0-9]+, GPU-[0-9a-fA-F-]+(, |$)' >/dev/null && return 1
  printf '%s\n' "$rows"
}

gpu_count() {
  local rows
  rows=$(gpu_query) || return 1
  printf '%s\n' "$rows" | wc -l
}

driver_version() {
  local version
  version=$(cat "$ROOT/sys/module/nvidia/version" 2>/dev/null) || return 1
  printf '%s\n' "$version"
}

os_release() {
  local value
  value=$(sed -n "s/^$1=//p" "$ROOT/etc/os-release")
  echo "${value//\"/}"
}

os_id() {
  os_release ID
}

os_package() {
  case $1:$(os_id) in
    nfs:ubuntu) echo nfs-common ;;
    nfs:*) echo nfs-utils ;;
    kernel-headers:ubuntu) echo "linux-headers-$(uname -r)" ;;
    kernel-headers:*) echo "kernel-devel-$(uname -r)" ;;
    fabric-manager:ubuntu) echo "nvidia-fabricmanager-${DRIVER_VERSION%%.*}=$DRIVER_VERSION-1" ;;
    fabric-manager:*) echo "nvidia-fabric-manager-$DRIVER_VERSION-1" ;;
  esac
}

apt_get() {
  DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout="$PKG_LOCK_SECONDS" "$@"
}

apt_lists_stale() {
  APT_UPDATED=0
}

pkg_install() {
  case $(os_id) in
    ubuntu)
      if [ "$APT_UPDATED" = 0 ]; then
        apt_get update
        APT_UPDATED=1
      fi
      apt_get install -y "$@" ;;
    *) dnf install -y -q "$@" ;;
  esac
}

verify_sha256() {
  local digest
  digest=$(sha256sum "$2")
  digest=${digest%% *}
  log "$1 sha256 $digest"
  [ -z "$3" ] || [ "$digest" = "$3" ] || fail "$1 does not match its pinned sha256 $3"
}
