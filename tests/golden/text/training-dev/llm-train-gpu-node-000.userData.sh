#!/bin/bash
# gpu-infra node bootstrap of fleet llm-train-gpu; log: /var/log/gpu-infra/bootstrap.log
set -euo pipefail
R=${GPU_INFRA_ROOT:-}
w() { mkdir -p "$R${1%/*}" && cat > "$R$1" && chmod "$2" "$R$1"; }
w /opt/gpu-infra/config.sh 644 <<'GPU_INFRA_EOF'
# shellcheck shell=bash disable=SC2034
FLEET=llm-train-gpu
REGION=cn-hangzhou
METADATA_URL=http://100.100.100.200/latest/meta-data
METADATA_TOKEN_URL=http://100.100.100.200/latest/api/token
DRIVER_ROUTE=auto_install
INSTALL=1
DRIVER_VERSION=550.127.08
CUDA_VERSION=12.4.1
CUDNN_VERSION=9.2.0.82
AUTO_INSTALL_SCRIPT=auto_install_v4.0.sh
AUTO_INSTALL_PATH=/opsx/ecs/linux/binary/script
MAX_REBOOTS=2
ERDMA=0
ERDMA_MIRROR=http://mirrors.cloud.aliyuncs.com/erdma
ERDMA_INSTALLER_URL=http://mirrors.cloud.aliyuncs.com/erdma/erdma_installer-1.5.9.tar.gz
ERDMA_INSTALLER_SHA256=''
ERDMA_MTU=1400
FABRIC_MANAGER=1
CUDA_REPOS=https://developer.download.nvidia.com/compute/cuda/repos
CMS_INSTALLER_URL=https://cms-agent-cn-hangzhou.oss-cn-hangzhou-internal.aliyuncs.com/Argus/agent_install_ecs-1.7.sh
CMS_AGENT_VERSION=3.5.10
LC_URL=https://aliyun-observability-release-cn-hangzhou.oss-cn-hangzhou.aliyuncs.com/loongcollector/linux64/latest/loongcollector.sh
LC_BINARY=/usr/local/ilogtail/loongcollector
LC_ID_FILE=/etc/ilogtail/user_defined_id
LOG_ID=llm-train-gpu
SHARED_FS_SOURCE=1294ff72e8-e2470.cn-hangzhou.nas.aliyuncs.com:/
SHARED_FS_OPTIONS=vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport
SHARED_FS_MOUNT_POINT=/mnt/shared
DATA_ROOT=/mnt
DISK_WAIT_SECONDS=600
DISK_POLL_SECONDS=5
ECS_ENDPOINT=ecs.cn-hangzhou.aliyuncs.com
CMS_ENDPOINT=metrics.cn-hangzhou.aliyuncs.com
HEALTH_TAG_KEY=GpuInfraHealth
NODE_RELEASE=e366c7cff1202786
NODE_TOOLS_BUCKET=llm-train-dev-checkpoints
NODE_TOOLS_OBJECT=gpu-infra/node-tools/34ee30d6da6e99beb5746cbfefc4c90fa3f3ee3c8030b19285e590ea655b33ec.sh
OOS_ENDPOINT=oos.cn-hangzhou.aliyuncs.com
SSH_USER_KEY=llm-train-gpu-ssh-user-key
SSH_HOST_KEY=llm-train-gpu-ssh-host-key
NODE_LIST=llm-train-gpu-nodes
MASTER_PORT=29500
readonly -a DATA_DISKS=(scratch)
readonly -a NVLINK_TYPES=()
readonly -a NODE_STEPS=(logs node_tools data_disks shared_fs gpu_driver fabric_manager cloudmonitor cluster_ssh health cluster_peers)
readonly -a NCCL_ENV=(NCCL_SOCKET_IFNAME=eth0 NCCL_IB_HCA=erdma NCCL_IB_GID_INDEX=1 NCCL_IB_QPS_PER_CONNECTION=8 NCCL_MIN_NCHANNELS=16 NCCL_NET_PLUGIN=none)
readonly -a NCCL_MULTI_NIC_ENV=(NCCL_IB_GID_INDEX=-1 NCCL_IB_ADDR_FAMILY=AF_INET NCCL_IB_ROCE_VERSION_NUM=2)
readonly -A GPU_COUNTS=(["ecs.gn7e-c16g1.4xlarge"]=1)
GPU_INFRA_EOF
w /opt/gpu-infra/probe.sh 644 <<'GPU_INFRA_EOF'
# shellcheck shell=bash
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
GPU_INFRA_EOF
w /opt/gpu-infra/bootstrap.sh 755 <<'GPU_INFRA_EOF'
#!/bin/bash
set -Eeuo pipefail
# shellcheck source=/dev/null
. "${GPU_INFRA_ROOT:-}/opt/gpu-infra/config.sh"
# shellcheck source=/dev/null
. "${GPU_INFRA_ROOT:-}/opt/gpu-infra/probe.sh"
EXPECT_REBOOT=0
MODE=${1:-node}
REBOOT_MARK=$STATE_DIR/reboot-requested
may_install() {
[ "$INSTALL" = 1 ] || fail "$1 is missing from the image (route preinstalled installs nothing)"
}
report() {
local status=$1 step=$2 err=$STATE_DIR/steps/$2.err
"$API" tag "$HEALTH_TAG_KEY=$status" || log "could not tag the instance $status"
[ -f "$err" ] || err=/dev/null
"$API" event "$status" "$step" "$err" || log "could not send the CloudMonitor event"
if [ -n "${LIFECYCLE_HOOK_ID:-}" ]; then
"$API" answer-scale-out || log "could not answer the scale-out"
fi
log "reported $status ($step)"
}
on_term() {
log "stopped by SIGTERM"
exit 143
}
on_exit() {
local code=$? err=$STATE_DIR/steps/$CURRENT_STEP.err
[ "$code" -eq 0 ] && return 0
if [ "$code" -eq 143 ] && { [ "$EXPECT_REBOOT" = 1 ] || [ -f "$REBOOT_MARK" ]; }; then
log "stopped by the reboot $CURRENT_STEP asked for; resuming at the next boot"
exit 0
fi
if [ -s "$err" ]; then
tail -n 20 "$err" | sed 's/^/  | /' | tee -a "$LOG_FILE" >&3
fi
log "FAILED (exit $code): the node is unhealthy"
rm -f "$STATE_DIR/ready"
printf '%s\n' "$CURRENT_STEP" > "$STATE_DIR/unhealthy"
[ "$MODE" = bake ] || report unhealthy "$CURRENT_STEP"
}
expect_reboot() {
EXPECT_REBOOT=1
}
request_reboot() {
echo "$1" > "$REBOOT_MARK"
log "reboot requested: $1"
}
reboot_shims() {
local shim=$STATE_DIR/shim-bin command
mkdir -p "$shim"
for command in reboot shutdown; do
printf '#!/bin/sh\necho "%s $*: deferred" >&2\necho "%s by an installer" > "%s"\n' \
      "$command" "$command" "$REBOOT_MARK" > "$shim/$command"
chmod 755 "$shim/$command"
done
PATH=$shim:$PATH
}
REBOOT_GRACE_SECONDS=${REBOOT_GRACE_SECONDS:-60}
run_installer() {
local pid waited=0
setsid "$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
if [ -f "$REBOOT_MARK" ]; then
if [ "$waited" -ge "$REBOOT_GRACE_SECONDS" ]; then
log "$1 still runs ${waited}s after asking for its reboot: stopped"
kill -TERM -- "-$pid" 2>/dev/null || true
wait "$pid" || true
return 0
fi
waited=$((waited + 1))
fi
sleep 1
done
wait "$pid"
}
run_step() {
local err=$STATE_DIR/steps/$1.err
CURRENT_STEP=$1
log "start"
"step_$1" 2> "$err"
EXPECT_REBOOT=0
[ ! -s "$err" ] || sed 's/^/  | /' "$err" | tee -a "$LOG_FILE" >&3
touch "$STATE_DIR/steps/$1.ok"
log "ok"
}
stop_for_reboot() {
local why count=0 limit=$MAX_REBOOTS
why=$(cat "$REBOOT_MARK")
[ -f "$STATE_DIR/reboots" ] && count=$(cat "$STATE_DIR/reboots")
[ "$MODE" != bake ] || limit=1
if [ "$count" -ge "$limit" ]; then
rm -f "$REBOOT_MARK"
fail "$why: still so after $count reboot(s)"
fi
echo $((count + 1)) > "$STATE_DIR/reboots"
log "stopping for the reboot ($why); the next run resumes"
if [ "$MODE" != bake ]; then
systemctl reboot
fi
exit 0
}
run_steps() {
local step
mkdir -p "$STATE_DIR/steps" "$ETC_DIR"
rm -f "$STATE_DIR/steps/"*.ok "$STATE_DIR/steps/"*.err "$REBOOT_MARK" "$STATE_DIR/unhealthy"
[ "$MODE" = rerun ] || rm -f "$STATE_DIR/ready"
[ -f "$STATE_DIR/first-boot" ] || date +%s > "$STATE_DIR/first-boot"
trap on_exit EXIT
trap on_term TERM
reboot_shims
log "gpu-infra bootstrap ($MODE) of fleet $FLEET"
for step in "$@"; do
run_step "$step"
[ ! -f "$REBOOT_MARK" ] || stop_for_reboot
done
rm -f "$STATE_DIR/reboots"
CURRENT_STEP=finished
log "bootstrap finished"
}
step_logs_install() {
local installer
[ ! -x "$ROOT$LC_BINARY" ] || return 0
installer=$(mktemp)
if [ "$INSTALL" != 1 ] || ! { curl -fsS --retry 5 -o "$installer" "$LC_URL" &&
verify_sha256 "LoongCollector's installer" "$installer" "" &&
sh "$installer" install "$REGION"; }; then
log "WARNING: no LoongCollector: this node's logs stay on the node"
fi
rm -f "$installer"
}
step_logs() {
mkdir -p "$ROOT${LC_ID_FILE%/*}"
echo "$LOG_ID" > "$ROOT$LC_ID_FILE"
log "node $(meta instance-id) logs as host $(hostname) in machine group $LOG_ID"
step_logs_install
}
step_node_tools() {
local installer=$STATE_DIR/node-tools.sh sha=${NODE_TOOLS_OBJECT##*/}
"$API" oss-get "$NODE_TOOLS_BUCKET" "$NODE_TOOLS_OBJECT" "$installer"
verify_sha256 "the node tools" "$installer" "${sha%.sh}"
GPU_INFRA_ROOT=$ROOT bash "$installer"
}
disk_serial() {
local serials serial
serials=$(meta disks/ 2>/dev/null) || return 1
for serial in $serials; do
serial=${serial%/}
if [ "$(meta "disks/$serial/name" 2>/dev/null)" = "$1" ]; then
echo "$serial"
return 0
fi
done
return 1
}
disk_device() {
local link
for link in "$ROOT/dev/disk/by-id/virtio-$1" "$ROOT"/dev/disk/by-id/nvme-*_"$1"; do
if [ -e "$link" ]; then
readlink -f "$link"
return 0
fi
done
return 1
}
wait_for() {
local what=$1 waited=0 answer
shift
until answer=$("$@"); do
[ "$waited" -lt "$DISK_WAIT_SECONDS" ] ||
fail "$what: not attached after ${DISK_WAIT_SECONDS}s (instance metadata disks/)"
[ "$waited" -gt 0 ] || log "waiting for $what"
sleep "$DISK_POLL_SECONDS"
waited=$((waited + DISK_POLL_SECONDS))
done
echo "$answer"
}
format_if_blank() {
local code=0
blkid "$1" >/dev/null || code=$?
case $code in
0) ;;
2) mkfs.xfs -q "$1" ;;
*) fail "blkid $1 exited $code" ;;
esac
}
step_data_disks() {
local name serial device uuid mount_point
for name in "${DATA_DISKS[@]}"; do
serial=$(wait_for "data disk $name" disk_serial "$name")
device=$(wait_for "the device of data disk $name (serial $serial)" disk_device "$serial")
mount_point=$DATA_ROOT/$name
format_if_blank "$device"
mkdir -p "$ROOT$mount_point"
uuid=$(blkid -s UUID -o value "$device")
grep -q "$uuid" "$ROOT/etc/fstab" ||
echo "UUID=$uuid $mount_point xfs defaults,nofail 0 2" >> "$ROOT/etc/fstab"
is_mounted "$mount_point" || mount "$mount_point"
xfs_growfs "$mount_point" >/dev/null
log "data disk $name (d-$serial, $device) at $mount_point"
done
}
MOUNT_SECONDS=120
step_shared_fs() {
command -v mount.nfs >/dev/null || pkg_install "$(os_package nfs)"
mkdir -p "$ROOT$SHARED_FS_MOUNT_POINT"
grep -q " $SHARED_FS_MOUNT_POINT " "$ROOT/etc/fstab" ||
echo "$SHARED_FS_SOURCE $SHARED_FS_MOUNT_POINT nfs $SHARED_FS_OPTIONS,_netdev,nofail 0 0" \
      >> "$ROOT/etc/fstab"
is_mounted "$SHARED_FS_MOUNT_POINT" || bounded "$MOUNT_SECONDS" \
    mount -t nfs -o "$SHARED_FS_OPTIONS" "$SHARED_FS_SOURCE" "$SHARED_FS_MOUNT_POINT"
}
step_shared_fs_off() {
if grep -q " $SHARED_FS_MOUNT_POINT nfs " "$ROOT/etc/fstab"; then
sed -i "\\# $SHARED_FS_MOUNT_POINT nfs #d" "$ROOT/etc/fstab"
log "removed the $SHARED_FS_MOUNT_POINT entry from /etc/fstab"
fi
if is_mounted "$SHARED_FS_MOUNT_POINT"; then
umount -l "$SHARED_FS_MOUNT_POINT"
fi
}
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
expect_reboot
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
has_nvswitch() {
[ -n "$(ls -A "$ROOT/proc/driver/nvidia-nvswitch/devices" 2>/dev/null)" ]
}
fabric_manager_version() {
local out
out=$(nv-fabricmanager --version) || return 1
printf '%s\n' "${out##* }"
}
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
agent_running() {
pgrep -f /usr/local/cloudmonitor/bin/argusagent >/dev/null
}
step_cloudmonitor() {
local installer
if agent_running; then
log "CloudMonitor agent running"
return 0
fi
if [ "$INSTALL" != 1 ]; then
for _ in 1 2 3 4 5 6; do
sleep 10
agent_running && return 0
done
fi
may_install "the CloudMonitor agent"
installer=$(mktemp)
curl -fsS --retry 5 -o "$installer" "$CMS_INSTALLER_URL"
verify_sha256 "the CloudMonitor installer" "$installer" ""
ARGUS_VERSION=$CMS_AGENT_VERSION bash "$installer"
rm -f "$installer"
agent_running || fail "the CloudMonitor agent is not running after its install"
}
step_cluster_ssh() {
local ssh=$ROOT/root/.ssh
mkdir -p "$ssh"
chmod 700 "$ssh"
fleet_key "$SSH_USER_KEY" "$ssh/id_ed25519"
KEY_CHANGED=0
fleet_key "$SSH_HOST_KEY" "$ROOT/etc/ssh/ssh_host_ed25519_key"
if [ "$KEY_CHANGED" = 1 ]; then
case $(os_id) in
ubuntu) systemctl try-restart ssh.service ;;
*) systemctl try-restart sshd.service ;;
esac
fi
touch "$ssh/authorized_keys"
grep -v ' gpu-infra-fleet$' "$ssh/authorized_keys" > "$ssh/keys" || [ $? -eq 1 ]
echo "$(cut -d ' ' -f 1,2 "$ssh/id_ed25519.pub") gpu-infra-fleet" >> "$ssh/keys"
chmod 600 "$ssh/keys"
mv "$ssh/keys" "$ssh/authorized_keys"
printf 'GlobalKnownHostsFile /etc/gpu-infra/known_hosts /etc/ssh/ssh_known_hosts\n' \
    > "$ROOT/etc/ssh/ssh_config.d/gpu-infra.conf"
systemctl enable gpu-infra-peers.timer
}
fleet_key() {
(umask 077 && "$API" secret "$1" > "$2.new")
ssh-keygen -y -f "$2.new" > "$2.pub.new"
cmp -s "$2.new" "$2" || KEY_CHANGED=1
mv "$2.pub.new" "$2.pub"
mv "$2.new" "$2"
}
step_cluster_peers() {
"$BIN_DIR/gpu-infra-peers" || [ $? -eq 75 ]
systemctl restart gpu-infra-peers.timer
}
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
local mounts=("${DATA_DISKS[@]/#/$DATA_ROOT/}")
[ -z "$SHARED_FS_SOURCE" ] || mounts+=("$SHARED_FS_MOUNT_POINT")
check "mounts ${mounts[*]}" all_mounted "${mounts[@]}"
check "CloudMonitor agent" agent_running
[ "${#HEALTH_PROBLEMS[@]}" -eq 0 ] || fail "health check: ${HEALTH_PROBLEMS[*]}"
date -u +%Y-%m-%dT%H:%M:%SZ > "$STATE_DIR/ready"
report healthy health
}
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
modinfo erdma >/dev/null || fail "no erdma kernel module after the install"
return 0
fi
ip link set dev eth0 mtu "$ERDMA_MTU"
[ -n "$(erdma_devices)" ] || fail "no eRDMA device after the install"
}
main() {
if [ "$MODE" = bake ]; then
run_steps gpu_driver fabric_manager cloudmonitor logs_install
elif [ "$MODE" = rerun ]; then
shift
run_steps "$@"
else
run_steps "${NODE_STEPS[@]}"
fi
}
main "$@"
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-api 755 <<'GPU_INFRA_EOF'
#!/usr/bin/env python3
"""usage: gpu-infra-api tag KEY=VALUE... | peers | secret NAME | answer-scale-out
| event STATUS STEP FILE | oss-get BUCKET KEY FILE | gpu-check cuda|nvlink"""
import base64
import datetime
import email.utils
import functools
import hashlib
import hmac
import http.client
import json
import os
import re
import shlex
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
VERSIONS = {"ecs": "2014-05-26", "ess": "2014-08-28", "cms": "2019-01-01", "oos": "2019-06-01"}
EVENT_LINES = 20
TRIES = 5
METADATA_SECONDS = 30
HINTS = {"InvalidObjectState": " (archived by a lifecycle rule: restore the object)"}
@functools.lru_cache(maxsize=None)
def config():
 path = os.environ.get("GPU_INFRA_ROOT", "") + "/opt/gpu-infra/config.sh"
 values = {}
 with open(path, encoding="utf-8") as handle:
  for line in handle:
   words = shlex.split(line, comments=True)
   if len(words) == 1 and "=" in words[0]:
    key, _, value = words[0].partition("=")
    values[key] = value
 return values
def fetch(what, make, seconds=15, target=None):
 for attempt in range(TRIES):
  last = attempt == TRIES - 1
  try:
   with urllib.request.urlopen(make(), timeout=seconds) as answer:
    if target is None:
     return answer.read()
    with open(target, "wb") as out:
     for chunk in iter(lambda: answer.read(1 << 20), b""):
      out.write(chunk)
    return None
  except urllib.error.HTTPError as error:
   code = error_code(error)
   if last or error.code < 500 and error.code != 429 and "Throttling" not in code:
    print(f"gpu-infra-api: {what} failed: {error.code} {code}{HINTS.get(code, '')}",
     file=sys.stderr)
    raise SystemExit(75 if code.startswith("EntityNotExists") else 1) from None
  except (OSError, http.client.HTTPException) as error:
   if last:
    raise SystemExit(f"gpu-infra-api: {what} failed: {error!r}") from None
  time.sleep(2 ** attempt)
def error_code(error):
 try:
  found = re.search(r'"Code": *"?([^",}]+)|<Code>([^<]+)|$', error.read().decode())
  return found.group(1) or found.group(2) or ""
 except Exception:
  return ""
def metadata(item):
 return _metadata(item, int(time.time() // 240))
@functools.lru_cache(maxsize=None)
def _metadata(item, window):
 cfg = config()
 if item is None:
  url, headers = cfg["METADATA_TOKEN_URL"], {"X-aliyun-ecs-metadata-token-ttl-seconds": "300"}
 else:
  url = f"{cfg['METADATA_URL']}/{item}"
  headers = {"X-aliyun-ecs-metadata-token": _metadata(None, window)}
 return fetch(f"metadata {item or 'token'}", lambda: urllib.request.Request(
  url, headers=headers, method="GET" if item else "PUT"), METADATA_SECONDS).decode()
def credentials():
 role = metadata("ram/security-credentials/").strip().splitlines()[0]
 return json.loads(metadata(f"ram/security-credentials/{role}"))
def encode(value):
 return urllib.parse.quote(str(value), safe="~")
def canonical(params):
 return "&".join(f"{encode(k)}={encode(v)}" for k, v in sorted(params.items()))
def hmac_sha1(key, text):
 return base64.b64encode(hmac.new(key.encode(), text.encode(), hashlib.sha1).digest()).decode()
def rpc_signature(params, secret):
 return hmac_sha1(secret + "&", "GET&%2F&" + encode(canonical(params)))
def header_signature(secret, verb, headers, resource, prefix):
 sent = {k.lower(): v for k, v in headers.items()}
 lines = [verb, sent.get("content-md5", ""), sent.get("content-type", ""), sent["date"]]
 lines += [f"{k}:{v}" for k, v in sorted(sent.items()) if k.startswith(prefix)]
 return hmac_sha1(secret, "\n".join(lines + [resource]))
def call(product, endpoint, action, **params):
 base = endpoint if "://" in endpoint else f"https://{endpoint}"
 def make():
  creds = credentials()
  query = {"Action": action, "Format": "JSON", "Version": VERSIONS[product],
   "AccessKeyId": creds["AccessKeyId"], "SecurityToken": creds["SecurityToken"],
   "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
   "SignatureNonce": uuid.uuid4().hex,
   "Timestamp": datetime.datetime.now(datetime.timezone.utc).strftime(
   "%Y-%m-%dT%H:%M:%SZ"), **params}
  signature = encode(rpc_signature(query, creds["AccessKeySecret"]))
  return f"{base}/?{canonical(query)}&Signature={signature}"
 return json.loads(fetch(f"{product} {action}", make))
def rest(service, operation, verb, url, resource, headers=None, target=None):
 def make():
  creds = credentials()
  sent = dict(headers or {}, Date=email.utils.formatdate(usegmt=True))
  sent["x-oss-security-token" if service == "oss" else "security-token"] = \
  creds["SecurityToken"]
  signature = header_signature(creds["AccessKeySecret"], verb, sent, resource,
   f"x-{service}-")
  sent["Authorization"] = f"{service.upper()} {creds['AccessKeyId']}:{signature}"
  return urllib.request.Request(url, headers=sent, method=verb)
 return fetch(f"{service} {operation} {resource}", make, 60, target)
def tag(cfg, pairs):
 params = {"RegionId": cfg["REGION"], "ResourceType": "instance",
  "ResourceId.1": metadata("instance-id")}
 for index, pair in enumerate(pairs, start=1):
  key, _, value = pair.partition("=")
  params.update({f"Tag.{index}.Key": key, f"Tag.{index}.Value": value})
 call("ecs", cfg["ECS_ENDPOINT"], "TagResources", **params)
def event(cfg, status, step, path):
 with open(path, encoding="utf-8", errors="replace") as handle:
  lines = handle.read().splitlines()[-EVENT_LINES:]
 content = json.dumps({"instanceId": metadata("instance-id"), "fleet": cfg["FLEET"],
  "status": status, "step": step, "stderr": lines})
 call("cms", cfg["CMS_ENDPOINT"], "PutCustomEvent", RegionId=cfg["REGION"],
  **{"EventInfo.1.EventName": "gpu-infra-node-" + status,
  "EventInfo.1.Content": content,
  "EventInfo.1.Time": str(int(time.time() * 1000))})
def oss_get(cfg, bucket, key, target):
 base = cfg.get("OSS_URL", "https://{b}.oss-{r}-internal.aliyuncs.com")
 rest("oss", "GetObject", "GET", base.format(b=bucket, r=cfg["REGION"]) + "/" +
  urllib.parse.quote(key), f"/{bucket}/{key}", target=target)
def main(argv):
 cfg = config()
 command, args = (argv[0], argv[1:]) if argv else ("", [])
 if command == "tag" and args:
  tag(cfg, args)
 elif command in ("peers", "secret") and len(args) == (command == "secret"):
  import gpu_infra_peers
  gpu_infra_peers.main(cfg, call, command, args)
 elif command == "answer-scale-out" and not args:
  import gpu_infra_scale_out
  gpu_infra_scale_out.answer_scale_out(cfg, call, metadata)
 elif command == "event" and len(args) == 3:
  event(cfg, *args)
 elif command == "gpu-check" and args in (["cuda"], ["nvlink"]):
  import gpu_infra_gpus
  getattr(gpu_infra_gpus, "check_" + args[0])()
 elif command == "oss-get" and len(args) == 3:
  oss_get(cfg, *args)
 else:
  raise SystemExit(__doc__)
if __name__ == "__main__":
 main(sys.argv[1:])
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-bootstrap.service 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra node bootstrap: driver, eRDMA, agent, cluster wiring, health check
Documentation=file:///var/log/gpu-infra/bootstrap.log
Wants=network-online.target
After=network-online.target
[Service]
Type=simple
ExecStart=/opt/gpu-infra/bootstrap.sh
RuntimeMaxSec=2h
[Install]
WantedBy=multi-user.target
GPU_INFRA_EOF
systemctl daemon-reload
systemctl enable gpu-infra-bootstrap.service
systemctl start --no-block gpu-infra-bootstrap.service
