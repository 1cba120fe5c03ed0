#!/bin/bash
# gpu-infra node bootstrap of fleet render-farm-gpu; log: /var/log/gpu-infra/bootstrap.log
set -euo pipefail
R=${GPU_INFRA_ROOT:-}
w() { mkdir -p "$R${1%/*}" && cat > "$R$1" && chmod "$2" "$R$1"; }
w /opt/gpu-infra/config.sh 644 <<'GPU_INFRA_EOF'
# shellcheck shell=bash disable=SC2034
FLEET=render-farm-gpu
REGION=cn-hangzhou
METADATA_URL=http://100.100.100.200/latest/meta-data
METADATA_TOKEN_URL=http://100.100.100.200/latest/api/token
DRIVER_ROUTE=grid
INSTALL=1
DRIVER_VERSION=535.161.07
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
FABRIC_MANAGER=0
CUDA_REPOS=https://developer.download.nvidia.com/compute/cuda/repos
DOCKER_VERSION=28.5.2
DOCKER_MIRROR=http://mirrors.cloud.aliyuncs.com/docker-ce
NVIDIA_CTK_VERSION=1.19.1
NVIDIA_CTK_MIRROR=http://mirrors.cloud.aliyuncs.com/libnvidia-container
CHECK_IMAGE=render-farm-registry-acr-registry-vpc.cn-hangzhou.cr.aliyuncs.com/render-farm-mirror/ubuntu:jammy-20251013
CHECK_SECONDS=300
PULL_TRIES=5
CMS_INSTALLER_URL=https://cms-agent-cn-hangzhou.oss-cn-hangzhou-internal.aliyuncs.com/Argus/agent_install_ecs-1.7.sh
CMS_AGENT_VERSION=3.5.10
LC_URL=https://aliyun-observability-release-cn-hangzhou.oss-cn-hangzhou.aliyuncs.com/loongcollector/linux64/latest/loongcollector.sh
LC_BINARY=/usr/local/ilogtail/loongcollector
LC_ID_FILE=/etc/ilogtail/user_defined_id
LOG_ID=render-farm-gpu
SHARED_FS_SOURCE=9f4d56ef59-905b8.cn-hangzhou.nas.aliyuncs.com:/
SHARED_FS_OPTIONS=vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport
SHARED_FS_MOUNT_POINT=/mnt/shared
DATA_ROOT=/mnt
DISK_WAIT_SECONDS=600
DISK_POLL_SECONDS=5
GRID_BUCKET=render-farm-prod-datasets
GRID_OBJECT=drivers/NVIDIA-Linux-x86_64-535.161.07-grid.run
GRID_SHA256=''
ECS_ENDPOINT=ecs.cn-hangzhou.aliyuncs.com
ESS_ENDPOINT=ess.cn-hangzhou.aliyuncs.com
CMS_ENDPOINT=metrics.cn-hangzhou.aliyuncs.com
SCALE_OUT_WAIT_SECONDS=1500
SCALING_GROUP_ID=asg-31883e18ec597d641
LIFECYCLE_HOOK_ID=e06103399a861c651
HEALTH_TAG_KEY=GpuInfraHealth
REGISTRY_ENDPOINT=render-farm-registry-acr-registry-vpc.cn-hangzhou.cr.aliyuncs.com
REGISTRY_INSTANCE_ID=f777b713587cbcd43
CR_ENDPOINT=cr.cn-hangzhou.aliyuncs.com
NODE_TOOLS_BUCKET=render-farm-prod-datasets
NODE_TOOLS_OBJECT=gpu-infra/node-tools/98d7e4ac1a117e7fd59f6acaf00fdc5b70a59b84863bc285c7c33c3c11dccd05.sh
readonly -a DATA_DISKS=(scratch)
readonly -a NVLINK_TYPES=()
readonly -a NODE_STEPS=(logs node_tools data_disks shared_fs gpu_driver container_runtime cloudmonitor render_worker health)
readonly -a NCCL_ENV=(NCCL_SOCKET_IFNAME=eth0 NCCL_IB_HCA=erdma NCCL_IB_GID_INDEX=1 NCCL_IB_QPS_PER_CONNECTION=8 NCCL_MIN_NCHANNELS=16 NCCL_NET_PLUGIN=none)
readonly -a NCCL_MULTI_NIC_ENV=(NCCL_IB_GID_INDEX=-1 NCCL_IB_ADDR_FAMILY=AF_INET NCCL_IB_ROCE_VERSION_NUM=2)
readonly -A GPU_COUNTS=(["ecs.vgn7i-vws-m12.3xlarge"]=1 ["ecs.vgn7i-vws-m24.7xlarge"]=1)
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
unhealthy() {
log "FAILED: no node tools: the node is unhealthy"
printf 'node_tools\n' > "$STATE_DIR/unhealthy"
"$API" tag "$HEALTH_TAG_KEY=unhealthy" || log "could not tag the instance unhealthy"
if [ -n "${LIFECYCLE_HOOK_ID:-}" ]; then
"$API" answer-scale-out || log "could not answer the scale-out"
fi
}
[ -z "${GPU_INFRA_LOADED:-}" ] || fail "the node tools did not install the bootstrap"
mkdir -p "$STATE_DIR"
installer=$STATE_DIR/node-tools.sh sha=${NODE_TOOLS_OBJECT##*/}
trap unhealthy EXIT
"$API" oss-get "$NODE_TOOLS_BUCKET" "$NODE_TOOLS_OBJECT" "$installer"
verify_sha256 "the node tools" "$installer" "${sha%.sh}"
GPU_INFRA_ROOT=$ROOT bash "$installer"
trap - EXIT
export GPU_INFRA_LOADED=1
exec "$ROOT/opt/gpu-infra/bootstrap.sh" "$@"
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-api 755 <<'GPU_INFRA_EOF'
#!/usr/bin/env python3
"""usage: gpu-infra-api tag KEY=VALUE... | peers | secret NAME | answer-scale-out
| event STATUS STEP FILE | oss-get BUCKET KEY FILE | model-get PREFIX DIR
| gpu-check cuda|nvlink | pull IMAGE"""
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
VERSIONS = {"ecs": "2014-05-26", "ess": "2014-08-28", "cms": "2019-01-01", "oos": "2019-06-01",
 "cr": "2018-12-01"}
EVENT_LINES = 20
TRIES = 5
METADATA_SECONDS = 30
HINTS = {"InvalidObjectState": " (archived by a lifecycle rule: restore the object)",
 "NoSuchKey": " (no such object: upload it)"}
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
def fetch(what, make, seconds=15, target=None, absent=()):
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
   if code in absent:
    return None
   if last or error.code < 500 and error.code != 429 and "Throttling" not in code:
    print(f"gpu-infra-api: {what} failed: {error.code} {code}{HINTS.get(code, '')}",
     file=sys.stderr)
    raise SystemExit(75 if code.startswith(("EntityNotExists", "NoSuchKey"))
     else 1) from None
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
def roa_signature(secret, verb, headers, path):
 sent = {k.lower(): v for k, v in headers.items()}
 lines = [verb, sent.get("accept", ""), sent.get("content-md5", ""),
  sent.get("content-type", ""), sent["date"]]
 lines += [f"{k}:{v}" for k, v in sorted(sent.items()) if k.startswith("x-acs-")]
 return hmac_sha1(secret, "\n".join(lines + [path]))
def roa(product, endpoint, operation, path, version):
 base = endpoint if "://" in endpoint else f"https://{endpoint}"
 def make():
  creds = credentials()
  sent = {"Accept": "application/json", "Date": email.utils.formatdate(usegmt=True),
   "x-acs-signature-method": "HMAC-SHA1", "x-acs-signature-version": "1.0",
   "x-acs-signature-nonce": uuid.uuid4().hex, "x-acs-version": version,
   "x-acs-security-token": creds["SecurityToken"]}
  signature = roa_signature(creds["AccessKeySecret"], "GET", sent, path)
  sent["Authorization"] = f"acs {creds['AccessKeyId']}:{signature}"
  return urllib.request.Request(base + path, headers=sent)
 return json.loads(fetch(f"{product} {operation}", make))
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
def rest(service, operation, verb, url, resource, headers=None, target=None, body=None,
 absent=()):
 def make():
  creds = credentials()
  sent = dict(headers or {}, Date=email.utils.formatdate(usegmt=True))
  if body is not None:
   sent["Content-Length"] = str(len(body))
  sent["x-oss-security-token" if service == "oss" else "security-token"] = \
  creds["SecurityToken"]
  signature = header_signature(creds["AccessKeySecret"], verb, sent, resource,
   f"x-{service}-")
  sent["Authorization"] = f"{service.upper()} {creds['AccessKeyId']}:{signature}"
  return urllib.request.Request(url, data=body, headers=sent, method=verb)
 return fetch(f"{service} {operation} {resource}", make, 60, target, absent)
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
def oss_url(cfg, bucket, key):
 base = cfg.get("OSS_URL", "https://{b}.oss-{r}-internal.aliyuncs.com")
 return base.format(b=bucket, r=cfg["REGION"]) + "/" + urllib.parse.quote(key)
def oss_get(cfg, bucket, key, target):
 rest("oss", "GetObject", "GET", oss_url(cfg, bucket, key), f"/{bucket}/{key}",
  target=target)
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
 elif command == "pull" and len(args) == 1:
  import gpu_infra_pull
  gpu_infra_pull.pull(cfg, sys.modules[__name__], args[0])
 elif command == "model-get" and len(args) == 2:
  import gpu_infra_models
  gpu_infra_models.model_get(cfg, oss_get, cfg["MODELS_BUCKET"], *args)
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
w /opt/gpu-infra/bin/gpu_infra_scale_out.py 644 <<'GPU_INFRA_EOF'
import json
import os
import sys
import time
import typing
POLL_SECONDS = float(os.environ.get("GPU_INFRA_POLL_SECONDS", "15"))
def instance_health(cfg, call, instance_ids):
 answer = call("ecs", cfg["ECS_ENDPOINT"], "DescribeInstances", RegionId=cfg["REGION"],
  InstanceIds=json.dumps(instance_ids), PageSize=100)
 health = dict.fromkeys(instance_ids)
 for instance in answer.get("Instances", {}).get("Instance", []):
  tags = {t["TagKey"]: t["TagValue"] for t in instance.get("Tags", {}).get("Tag", [])}
  if tags.get(cfg["HEALTH_TAG_KEY"]) in ("healthy", "unhealthy"):
   health[instance["InstanceId"]] = tags[cfg["HEALTH_TAG_KEY"]]
 return health
def pending_action(cfg, call, instance_id):
 activities = call("ess", cfg["ESS_ENDPOINT"], "DescribeScalingActivities",
  RegionId=cfg["REGION"], ScalingGroupId=cfg["SCALING_GROUP_ID"],
  StatusCode="InProgress", PageSize=50)
 for activity in activities.get("ScalingActivities", {}).get("ScalingActivity", []):
  actions = call("ess", cfg["ESS_ENDPOINT"], "DescribeLifecycleActions",
   RegionId=cfg["REGION"], ScalingActivityId=activity["ScalingActivityId"],
   LifecycleActionStatus="Pending", MaxResults=50)
  for action in actions.get("LifecycleActions", {}).get("LifecycleAction", []):
   members = action.get("InstanceIds", {}).get("InstanceId", [])
   if action.get("LifecycleHookId") == cfg["LIFECYCLE_HOOK_ID"] and \
   instance_id in members:
    return action["LifecycleActionToken"], members
 return None
def batch_result(health):
 return "CONTINUE" if "healthy" in health.values() else "ABANDON"
def first_boot():
 path = os.environ.get("GPU_INFRA_ROOT", "") + "/var/lib/gpu-infra/first-boot"
 try:
  with open(path, encoding="utf-8") as handle:
   return int(handle.read().strip())
 except (OSError, ValueError):
  return int(time.time())
def answer_scale_out(cfg, call, metadata):
 me = metadata("instance-id")
 deadline = first_boot() + int(cfg["SCALE_OUT_WAIT_SECONDS"])
 while True:
  found = pending_action(cfg, call, me)
  if found is None:
   print("gpu-infra-api: no pending scale-out action for this instance",
    file=sys.stderr)
   return
  token, members = found
  health = instance_health(cfg, call, members)
  silent = [i for i, status in health.items() if status is None]
  if silent and time.time() < deadline:
   time.sleep(POLL_SECONDS)
   continue
  health.update(dict.fromkeys(silent, "unhealthy"))
  result = batch_result(health)
  try:
   call("ess", cfg["ESS_ENDPOINT"], "CompleteLifecycleAction", RegionId=cfg["REGION"],
    LifecycleHookId=cfg["LIFECYCLE_HOOK_ID"], LifecycleActionToken=token,
    LifecycleActionResult=result)
  except SystemExit:
   if pending_action(cfg, call, me) is None:
    return
   raise
  if result == "CONTINUE":
   for instance_id in sorted(i for i, s in health.items() if s == "unhealthy"):
    call("ess", cfg["ESS_ENDPOINT"], "SetInstanceHealth", RegionId=cfg["REGION"],
     InstanceId=instance_id, HealthStatus="Unhealthy")
  return
GPU_INFRA_EOF
systemctl daemon-reload
systemctl enable gpu-infra-bootstrap.service
systemctl start --no-block gpu-infra-bootstrap.service
