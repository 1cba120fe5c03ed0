#!/bin/bash
# gpu-infra node tools of fleet chat-serve-gpu (the node_tools step runs this)
set -euo pipefail
R=${GPU_INFRA_ROOT:-}
C=
w() { mkdir -p "$R${1%/*}" && cat > "$R$1.new" && chmod "$2" "$R$1.new" && { cmp -s "$R$1.new" "$R$1" && [ "$(stat -c %a "$R$1")" = "$2" ] || C="$C $1"; } && mv "$R$1.new" "$R$1"; }
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
tool_version() {
local out
out=$("$1" --version 2>/dev/null) || return 1
out=${out%%$'\n'*}
out=${out#* version }
printf '%s\n' "${out%%,*}"
}
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
step_serving() {
local stamp=$STATE_DIR/serving.sha256 error=$STATE_DIR/serving.error digest url waited=0
local waiting=$STATE_DIR/serving.waiting
digest=$(cat "$ETC_DIR/serving.env" "$ROOT/etc/systemd/system/gpu-infra-serving.service" \
    "$BIN_DIR/gpu-infra-serve" | sha256sum)
rm -f "$error" "$waiting"
systemctl enable gpu-infra-serving.service
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
systemctl start gpu-infra-serving.service
else
systemctl restart gpu-infra-serving.service
fi
printf '%s\n' "$digest" > "$stamp"
url=http://127.0.0.1:$SERVING_PORT$SERVING_READY_PATH
until curl -fsS -o /dev/null --max-time 5 "$url"; do
[ ! -s "$error" ] || fail "the model server cannot start: $(cat "$error")"
[ "$waited" -lt "$SERVING_START_SECONDS" ] ||
fail "the model server did not answer $url in ${SERVING_START_SECONDS}s:" \
        "$(cat "$waiting" 2>/dev/null || echo "journalctl -u gpu-infra-serving")"
sleep "$SERVING_POLL_SECONDS"
waited=$((waited + SERVING_POLL_SECONDS))
done
log "the model server answers $url (${waited}s)"
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
container_gpus_are() {
local listed
docker image inspect "$CHECK_IMAGE" >/dev/null 2>&1 ||
bounded "$CHECK_SECONDS" "$BIN_DIR/gpu-infra-pull" "$CHECK_IMAGE" || return 1
listed=$(bounded "$CHECK_SECONDS" docker run --rm --gpus all "$CHECK_IMAGE" nvidia-smi -L) ||
return 1
[ "$(grep -c '^GPU [0-9]*: ' <<< "$listed")" -eq "$1" ]
}
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
main() {
if [ "$MODE" = bake ]; then
run_steps gpu_driver container_runtime cloudmonitor logs_install
elif [ "$MODE" = rerun ]; then
shift
run_steps "$@"
else
run_steps "${NODE_STEPS[@]}"
fi
}
main "$@"
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu_infra_health.py 755 <<'GPU_INFRA_EOF'
#!/usr/bin/env python3
"""usage: gpu_infra_health.py GROUP_NAME

Nothing while the bootstrap has not finished (neither its ready nor its unhealthy marker: a
run going, or stopped for the driver's reboot). A bootstrap that ended unhealthy is one fault
(its failed step). Else it checks the node's GPUs as they are now: nvidia-smi answers within
PROBE_SECONDS (else the driver no longer answers), every GPU of the instance type answers
(else one fell off the bus), no uncorrected ECC error, no critical XID in this boot's kernel
log, and where the fleet uses eRDMA every eRDMA device is ACTIVE. It puts the number of
faults as the custom metric gpu_health_faults (fleet dimension) into the CloudMonitor group
GROUP_NAME, the stack's alarm watches it; on a fault it also sends the event
gpu-infra-gpu-fault (instance and faults), tags the instance unhealthy (training peers leave
it out) and in a scaling group sets it Unhealthy, so ESS replaces it. Exit 1 on a fault, 0
when healthy or not finished."""
import json
import os
import re
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple
ROOT = os.environ.get("GPU_INFRA_ROOT", "")
STATE_DIR = ROOT + "/var/lib/gpu-infra"
PROBE_SECONDS = float(os.environ.get("PROBE_SECONDS", "20"))
METRIC = "gpu_health_faults"
CRITICAL_XIDS = frozenset({48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140})
"""XIDs that mean the GPU, its memory or its link failed, not the application (NVIDIA "XID
Errors", r555: 48 double-bit ECC, 61/62 internal micro-controller, 63/64 row remapping,
74 NVLink, 79 fallen off the bus, 92 high single-bit ECC rate, 94/95 contained and
uncontained ECC, 119/120 GSP, 140 unrecovered ECC)."""
XID = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+)")
ROW = re.compile(r"^(\d+), GPU-[0-9A-Fa-f-]+, (.*)$")
GPU_COUNTS = re.compile(r'\["([^"]+)"\]=(\d+)')
Run = Callable[[List[str]], str]
def run(command: List[str]) -> str:
 try:
  done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
   universal_newlines=True, timeout=PROBE_SECONDS)
 except subprocess.TimeoutExpired:
  raise RuntimeError("no answer in {:g} s".format(PROBE_SECONDS)) from None
 except OSError as error:
  raise RuntimeError(str(error)) from None
 if done.returncode != 0:
  raise RuntimeError("exit {}".format(done.returncode))
 return done.stdout
def expected_gpus(instance_type: str) -> Optional[int]:
 with open(ROOT + "/opt/gpu-infra/config.sh", encoding="utf-8") as handle:
  for line in handle:
   if line.startswith("readonly -A GPU_COUNTS="):
    return dict((t, int(n)) for t, n in GPU_COUNTS.findall(line)).get(instance_type)
 return None
def gpu_faults(run_command: Run, expected: Optional[int]) -> List[str]:
 try:
  output = run_command(["nvidia-smi", "--query-gpu=index,uuid,"
   "ecc.errors.uncorrected.volatile.total",
   "--format=csv,noheader,nounits"])
 except RuntimeError as error:
  return ["the NVIDIA driver does not answer (nvidia-smi: {})".format(error)]
 faults, answering = [], 0
 for line in output.strip().splitlines():
  row = ROW.match(line.strip())
  if row is None:
   faults.append("a GPU does not answer: {}".format(line.strip()[:120]))
   continue
  answering += 1
  ecc = row.group(2).strip()
  if ecc not in ("0", "[N/A]", "N/A"):
   faults.append("GPU {}: {} uncorrected ECC errors".format(row.group(1), ecc))
 if expected is not None and answering < expected:
  faults.append("{} of {} GPUs answer (fallen off the bus?)".format(answering, expected))
 return faults
def xid_faults(run_command: Run) -> List[str]:
 try:
  log = run_command(["journalctl", "-k", "-b", "-o", "cat", "--no-pager"])
 except RuntimeError as error:
  return ["the kernel log cannot be read (journalctl: {})".format(error)]
 seen: Dict[Tuple[str, int], int] = {}
 for bus, code in XID.findall(log):
  if int(code) in CRITICAL_XIDS:
   seen[(bus, int(code))] = seen.get((bus, int(code)), 0) + 1
 faults = ["XID {} on {} ({}x)".format(code, bus, count)
  for (bus, code), count in sorted(seen.items())]
 if "has fallen off the bus" in log and not any(code == 79 for _, code in seen):
  faults.append("a GPU has fallen off the bus (kernel log)")
 return faults
def erdma_faults() -> List[str]:
 base = ROOT + "/sys/class/infiniband"
 devices = sorted(d for d in os.listdir(base) if d.startswith("erdma")) \
 if os.path.isdir(base) else []
 if not devices:
  return ["no eRDMA device"]
 faults = []
 for device in devices:
  try:
   with open("{}/{}/ports/1/state".format(base, device), encoding="utf-8") as handle:
    state = handle.read().strip()
  except OSError:
   state = "unreadable"
  if "ACTIVE" not in state:
   faults.append("eRDMA {} is {}".format(device, state or "empty"))
 return faults
def bootstrap_faults() -> Optional[List[str]]:
 try:
  with open(STATE_DIR + "/unhealthy", encoding="utf-8") as handle:
   return ["the bootstrap ended unhealthy (step {})".format(
    handle.read().strip()[:60] or "unknown")]
 except OSError:
  pass
 return [] if os.path.exists(STATE_DIR + "/ready") else None
def check(cfg: Dict[str, str], instance_type: str, run_command: Run = run) -> List[str]:
 faults = gpu_faults(run_command, expected_gpus(instance_type))
 faults += xid_faults(run_command)
 if cfg.get("ERDMA") == "1":
  faults += erdma_faults()
 return faults
def group_id(node: Any, cfg: Dict[str, str], name: str) -> str:
 cache = STATE_DIR + "/gpu-health-group"
 try:
  with open(cache, encoding="utf-8") as handle:
   return handle.read().strip()
 except OSError:
  pass
 answer = node.call("cms", cfg["CMS_ENDPOINT"], "DescribeMonitorGroups",
  RegionId=cfg["REGION"], GroupName=name, PageSize=10)
 groups = [g for g in answer.get("Resources", {}).get("Resource", [])
  if g.get("GroupName") == name]
 if len(groups) != 1:
  raise SystemExit("gpu_infra_health: {} CloudMonitor groups named {}".format(
   len(groups), name))
 os.makedirs(os.path.dirname(cache), exist_ok=True)
 with open(cache, "w", encoding="utf-8") as handle:
  handle.write(str(groups[0]["GroupId"]))
 return str(groups[0]["GroupId"])
def publish(node: Any, cfg: Dict[str, str], group: str, instance: str,
 faults: List[str]) -> None:
 now = str(int(time.time() * 1000))
 node.call("cms", cfg["CMS_ENDPOINT"], "PutCustomMetric", **{
  "MetricList.1.GroupId": group, "MetricList.1.MetricName": METRIC,
  "MetricList.1.Dimensions": json.dumps({"fleet": cfg["FLEET"]}),
  "MetricList.1.Values": json.dumps({"value": len(faults)}),
  "MetricList.1.Time": now, "MetricList.1.Type": "0"})
 if not faults:
  return
 node.call("cms", cfg["CMS_ENDPOINT"], "PutCustomEvent", RegionId=cfg["REGION"], **{
  "EventInfo.1.EventName": "gpu-infra-gpu-fault", "EventInfo.1.Time": now,
  "EventInfo.1.Content": json.dumps({"instanceId": instance, "fleet": cfg["FLEET"],
  "faults": faults})})
 node.tag(cfg, ["{}=unhealthy".format(cfg["HEALTH_TAG_KEY"])])
 if cfg.get("SCALING_GROUP_ID"):
  node.call("ess", cfg["ESS_ENDPOINT"], "SetInstanceHealth", RegionId=cfg["REGION"],
   InstanceId=instance, HealthStatus="Unhealthy")
def main(argv: List[str]) -> int:
 if len(argv) != 1:
  raise SystemExit(__doc__)
 faults = bootstrap_faults()
 if faults is None:
  print("the bootstrap has not finished: nothing checked")
  return 0
 from gpu_infra_node import api
 node = api()
 cfg = node.config()
 instance = node.metadata("instance-id").strip()
 if not faults:
  faults = check(cfg, node.metadata("instance/instance-type").strip())
 for fault in faults:
  print("gpu fault: " + fault, file=sys.stderr)
 publish(node, cfg, group_id(node, cfg, argv[0]), instance, faults)
 print("{} fault(s) reported for {}".format(len(faults), instance))
 return 1 if faults else 0
if __name__ == "__main__":
 sys.exit(main(sys.argv[1:]))
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-gpu-health.service 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra GPU health check (XID, ECC, GPUs on the bus, driver, eRDMA)
Documentation=file:///opt/gpu-infra/bin/gpu_infra_health.py
After=gpu-infra-bootstrap.service

[Service]
Type=oneshot
ExecStart=/usr/bin/python3 /opt/gpu-infra/bin/gpu_infra_health.py chat-serve-gpu-health-nodes
# bounded: a tenth of one CPU, idle I/O, stopped after 2 minutes (each probe has 20 s)
CPUQuota=10%
Nice=10
IOSchedulingClass=idle
TimeoutStartSec=120
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-gpu-health.timer 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra GPU health check every few minutes after boot

[Timer]
OnBootSec=10min
OnUnitInactiveSec=5min
AccuracySec=30s

[Install]
WantedBy=timers.target
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-serve 755 <<'GPU_INFRA_EOF'
#!/bin/sh
set -eu
R=${GPU_INFRA_ROOT:-}
ERROR_FILE=$R/var/lib/gpu-infra/serving.error WAITING_FILE=$R/var/lib/gpu-infra/serving.waiting
API=${GPU_INFRA_API:-$R/opt/gpu-infra/bin/gpu-infra-api}
# shellcheck source=/dev/null
. "$R/etc/gpu-infra/serving.env"
failed() {
printf '%s\n' "$2" > "$1"
printf 'gpu-infra-serve: %s\n' "$2" >&2
exit "$3"
}
mkdir -p "${ERROR_FILE%/*}"
rm -f "$ERROR_FILE" "$WAITING_FILE"
set -- --rm --name "$SERVING_CONTAINER" --gpus all --ipc host --network host
if [ -n "$MODEL" ]; then
code=0
dir=$("$API" model-get "$MODEL" "$R$MODEL_CACHE" 2>"$ERROR_FILE.tmp") || code=$?
[ "$code" -ne 75 ] || failed "$WAITING_FILE" "model $MODEL: $(tail -n 1 "$ERROR_FILE.tmp")" 75
[ "$code" -eq 0 ] || failed "$ERROR_FILE" "model $MODEL: $(tail -n 1 "$ERROR_FILE.tmp")" 1
rm -f "$ERROR_FILE.tmp"
set -- "$@" -v "$dir:$MODEL_DIR:ro" -e "MODEL_DIR=$MODEL_DIR"
fi
gpu-infra-pull "$SERVING_IMAGE" 2>"$ERROR_FILE.tmp" ||
failed "$ERROR_FILE" "image $SERVING_IMAGE: $(tail -n 1 "$ERROR_FILE.tmp")" 1
rm -f "$ERROR_FILE.tmp"
[ -z "$SERVING_ENTRYPOINT" ] || set -- "$@" --entrypoint "$SERVING_ENTRYPOINT"
eval "set -- \"\$@\" \"\$SERVING_IMAGE\" $SERVING_ARGS"
exec docker run "$@"
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-serving.service 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra model server (the stack's serving section)
After=docker.service network-online.target
Requires=docker.service
Wants=network-online.target
[Service]
Environment=PATH=/opt/gpu-infra/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ExecStartPre=-/usr/bin/docker rm -f gpu-infra-serving
ExecStart=/opt/gpu-infra/bin/gpu-infra-serve
ExecStop=/usr/bin/docker stop --time 30 gpu-infra-serving
TimeoutStopSec=60
Restart=always
RestartSec=10
[Install]
WantedBy=multi-user.target
GPU_INFRA_EOF
w /etc/gpu-infra/serving.env 644 <<'GPU_INFRA_EOF'
SERVING_IMAGE=chat-serve-registry-acr-registry-vpc.cn-hangzhou.cr.aliyuncs.com/chat-serve/serve:latest
SERVING_ENTRYPOINT=vllm
SERVING_ARGS='serve /mnt/models/chat --port 8000'
SERVING_CONTAINER=gpu-infra-serving
MODEL=chat
MODEL_CACHE=/mnt/model-cache/models
MODEL_DIR=/mnt/models/chat
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu_infra_models.py 644 <<'GPU_INFRA_EOF'
import hashlib
import os
import re
import shutil
import tempfile
import typing
MANIFEST = "SHA256SUMS"
LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
def entries(text, where):
 found = []
 for number, line in enumerate(text.splitlines(), start=1):
  if not line.strip():
   continue
  match = LINE.match(line)
  path = match.group(2) if match else ""
  path = path[2:] if path.startswith("./") else path
  parts = path.split("/")
  if not match or path.startswith("/") or {"", ".", ".."} & set(parts):
   raise SystemExit("gpu-infra-api: %s line %d: not `<sha256>  <relative path>`"
    % (where, number))
  found.append((match.group(1), path))
 if not found:
  raise SystemExit("gpu-infra-api: %s lists no file" % where)
 return found
def sha256_of(path):
 digest = hashlib.sha256()
 with open(path, "rb") as handle:
  for chunk in iter(lambda: handle.read(1 << 20), b""):
   digest.update(chunk)
 return digest.hexdigest()
def model_get(cfg, oss_get, bucket, prefix, cache):
 os.makedirs(cache, exist_ok=True)
 staging = tempfile.mkdtemp(prefix=".partial-", dir=cache)
 try:
  manifest = os.path.join(staging, MANIFEST)
  oss_get(cfg, bucket, "%s/%s" % (prefix, MANIFEST), manifest)
  final = os.path.join(cache, sha256_of(manifest))
  for name in os.listdir(cache):
   if os.path.join(cache, name) not in (staging, final):
    shutil.rmtree(os.path.join(cache, name), ignore_errors=True)
  if not os.path.isdir(final):
   where = "oss://%s/%s/%s" % (bucket, prefix, MANIFEST)
   with open(manifest, encoding="utf-8", errors="replace") as handle:
    files = entries(handle.read(), where)
   tree = os.path.join(staging, "model")
   for sha256, path in files:
    target = os.path.join(tree, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    oss_get(cfg, bucket, "%s/%s" % (prefix, path), target)
    if sha256_of(target) != sha256:
     raise SystemExit("gpu-infra-api: oss://%s/%s/%s does not match its sha256 "
      "in %s (corrupt, or replaced after the manifest was made)"
      % (bucket, prefix, path, MANIFEST))
   os.rename(tree, final)
  print(final)
 finally:
  shutil.rmtree(staging, ignore_errors=True)
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu_infra_node.py 644 <<'GPU_INFRA_EOF'
import importlib.machinery
import importlib.util
import os
from typing import Any
ROOT = os.environ.get("GPU_INFRA_ROOT", "")
STATE_DIR = ROOT + "/var/lib/gpu-infra"
def api() -> Any:
 path = ROOT + "/opt/gpu-infra/bin/gpu-infra-api"
 loader = importlib.machinery.SourceFileLoader("gpu_infra_api", path)
 spec = importlib.util.spec_from_loader("gpu_infra_api", loader)
 assert spec is not None
 module = importlib.util.module_from_spec(spec)
 loader.exec_module(module)
 return module
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu_infra_gpus.py 644 <<'GPU_INFRA_EOF'
import ctypes
NVLINK_MAX_LINKS = 18
def check_cuda() -> None:
 count = ctypes.c_int()
 cuda = ctypes.CDLL("libcuda.so.1")
 if cuda.cuInit(0) or cuda.cuDeviceGetCount(ctypes.byref(count)) or not count.value:
  raise SystemExit("gpu-infra-api: CUDA sees no GPU")
 for index in range(count.value):
  device, context = ctypes.c_int(), ctypes.c_void_p()
  if cuda.cuDeviceGet(ctypes.byref(device), index) or \
  cuda.cuCtxCreate_v2(ctypes.byref(context), 0, device):
   raise SystemExit("gpu-infra-api: no CUDA context on GPU {}".format(index))
  cuda.cuCtxDestroy_v2(context)
def check_nvlink() -> None:
 count = ctypes.c_int()
 nvml = ctypes.CDLL("libnvidia-ml.so.1")
 if nvml.nvmlInit_v2() or nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)):
  raise SystemExit("gpu-infra-api: NVML did not start")
 for index in range(count.value):
  handle, active, links = ctypes.c_void_p(), ctypes.c_int(), 0
  if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)):
   raise SystemExit("gpu-infra-api: NVML has no handle for GPU {}".format(index))
  for link in range(NVLINK_MAX_LINKS):
   if nvml.nvmlDeviceGetNvLinkState(handle, link, ctypes.byref(active)):
    continue
   if not active.value:
    raise SystemExit("gpu-infra-api: GPU {} NVLink {} down".format(index, link))
   links += 1
  if not links:
   raise SystemExit("gpu-infra-api: GPU {} has no NVLink link".format(index))
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu_infra_pull.py 644 <<'GPU_INFRA_EOF'
import subprocess
import sys
import time
from typing import Any, Dict, NoReturn, Tuple
def fail(message: str) -> NoReturn:
 print("gpu-infra-pull: " + message, file=sys.stderr)
 raise SystemExit(1)
PERSONAL_VERSION = "2016-06-07"
def temporary_login(cfg: Dict[str, str], api: Any) -> Tuple[str, str]:
 if cfg.get("REGISTRY_INSTANCE_ID"):
  token = api.call("cr", cfg["CR_ENDPOINT"], "GetAuthorizationToken",
   InstanceId=cfg["REGISTRY_INSTANCE_ID"])
  return token["TempUsername"], token["AuthorizationToken"]
 data = api.roa("cr", cfg["CR_ENDPOINT"], "GetAuthorizationToken", "/tokens",
  PERSONAL_VERSION)["data"]
 return data["tempUserName"], data["authorizationToken"]
def login(cfg: Dict[str, str], api: Any, host: str) -> None:
 user, password = temporary_login(cfg, api)
 done = subprocess.run(["docker", "login", "--username", user,
  "--password-stdin", host], input=password,
  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
  universal_newlines=True)
 if done.returncode:
  lines = done.stderr.strip().splitlines()
  fail("docker login {} failed: {}".format(host, lines[-1] if lines else done.returncode))
def pull(cfg: Dict[str, str], api: Any, image: str) -> None:
 host = image.split("/", 1)[0]
 if cfg.get("REGISTRY_ENDPOINT") and host == cfg["REGISTRY_ENDPOINT"]:
  login(cfg, api, host)
 tries = int(cfg.get("PULL_TRIES", "5"))
 delay = float(cfg.get("PULL_RETRY_SECONDS", "2"))
 last = ""
 for attempt in range(tries):
  if attempt:
   time.sleep(delay * 2 ** (attempt - 1))
  done = subprocess.run(["docker", "pull", "--quiet", image], stdout=subprocess.DEVNULL,
   stderr=subprocess.PIPE, universal_newlines=True)
  if done.returncode == 0:
   return
  lines = done.stderr.strip().splitlines()
  last = lines[-1] if lines else "docker pull exited {}".format(done.returncode)
 fail("{}: not pulled after {} tries: {}".format(image, tries, last))
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-pull 755 <<'GPU_INFRA_EOF'
#!/bin/sh
[ "$#" -eq 1 ] || { echo "usage: gpu-infra-pull IMAGE" >&2; exit 2; }
exec "${GPU_INFRA_API:-${0%/*}/gpu-infra-api}" pull "$1"
GPU_INFRA_EOF
systemctl daemon-reload
systemctl enable gpu-infra-gpu-health.timer
case "$C " in
  *" /etc/systemd/system/gpu-infra-gpu-health.timer "*) systemctl restart --no-block gpu-infra-gpu-health.timer ;;
  *) systemctl start --no-block gpu-infra-gpu-health.timer ;;
esac
