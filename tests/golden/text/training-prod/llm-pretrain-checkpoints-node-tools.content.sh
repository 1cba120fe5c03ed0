#!/bin/bash
# gpu-infra node tools of fleet llm-pretrain-gpu (the node_tools step runs this)
set -euo pipefail
R=${GPU_INFRA_ROOT:-}
C=
w() { mkdir -p "$R${1%/*}" && cat > "$R$1.new" && chmod "$2" "$R$1.new" && { cmp -s "$R$1.new" "$R$1" && [ "$(stat -c %a "$R$1")" = "$2" ] || C="$C $1"; } && mv "$R$1.new" "$R$1"; }
w /opt/gpu-infra/bin/gpu-infra-torchrun 755 <<'GPU_INFRA_EOF'
#!/bin/sh
# shellcheck disable=SC1090,SC1091
set -eu
etc=${GPU_INFRA_ROOT:-}/etc/gpu-infra
[ "$#" -gt 0 ] || { echo "usage: gpu-infra-torchrun SCRIPT [ARGS...]" >&2; exit 2; }
set -a
. "$etc/torchrun.env"
. "$etc/elastic.env"
if [ -r "$etc/nccl.env" ]; then . "$etc/nccl.env"; fi
set +a
exec torchrun --nnodes="${NNODES_MIN:-$NNODES}:$NNODES" --nproc-per-node="$NPROC_PER_NODE" \
  --rdzv-backend=c10d --rdzv-endpoint="$MASTER_ADDR:$RDZV_PORT" --rdzv-id="$RDZV_ID" \
  --max-restarts="${GPU_INFRA_MAX_RESTARTS:-$MAX_RESTARTS}" --no-python \
  "$(dirname "$0")/gpu-infra-resume" "${PYTHON:-python3}" "$@"
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-resume 755 <<'GPU_INFRA_EOF'
#!/bin/sh
set -eu
dir=${GPU_INFRA_CHECKPOINT_DIR:?GPU_INFRA_CHECKPOINT_DIR is not set}
[ "$#" -gt 0 ] || { echo "usage: gpu-infra-resume COMMAND [ARGS...]" >&2; exit 2; }
mkdir -p "$dir"
newest=
for marker in "$dir"/*/COMPLETE; do
[ -f "$marker" ] || continue
if [ -z "$newest" ] || ! [ "$newest" -nt "$marker" ]; then
newest=$marker
fi
done
say="gpu-infra-resume: restart ${TORCHELASTIC_RESTART_COUNT:-0}:"
if [ -n "$newest" ]; then
GPU_INFRA_RESUME_FROM=${newest%/COMPLETE}
export GPU_INFRA_RESUME_FROM
echo "$say resuming from $GPU_INFRA_RESUME_FROM" >&2
else
unset GPU_INFRA_RESUME_FROM
echo "$say no complete checkpoint in $dir" >&2
fi
exec "$@"
GPU_INFRA_EOF
w /etc/gpu-infra/elastic.env 644 <<'GPU_INFRA_EOF'
RDZV_PORT=29400
RDZV_ID=llm-pretrain-gpu
MAX_RESTARTS=3
GPU_INFRA_CHECKPOINT_DIR=/mnt/shared/checkpoints
GPU_INFRA_SPOT_NOTICE=/run/gpu-infra/spot/termination-time
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
ExecStart=/usr/bin/python3 /opt/gpu-infra/bin/gpu_infra_health.py llm-pretrain-gpu-health-nodes
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
w /opt/gpu-infra/bin/gpu_infra_peers.py 644 <<'GPU_INFRA_EOF'
import json
import typing
def parameter(cfg, call, name, secret=False):
 extra = {"WithDecryption": "true"} if secret else {}
 answer = call("oos", cfg["OOS_ENDPOINT"], "GetSecretParameter" if secret else "GetParameter",
  RegionId=cfg["REGION"], Name=name, **extra)
 return str(answer["Parameter"]["Value"])
def peers(cfg, call):
 ids, page = [], 1
 while page == 1 or ids[-1:] == ["+"]:
  del ids[-1:]
  name = cfg["NODE_LIST"] + ("-%d" % page if page > 1 else "")
  ids += [i for i in parameter(cfg, call, name).split(",") if i]
  page += 1
 for start in range(0, len(ids), 100):
  answer = call("ecs", cfg["ECS_ENDPOINT"], "DescribeInstances", RegionId=cfg["REGION"],
   Status="Running", PageSize=100,
   InstanceIds=json.dumps(ids[start:start + 100]))
  for i in answer.get("Instances", {}).get("Instance", []):
   tags = {t["TagKey"]: t["TagValue"] for t in i.get("Tags", {}).get("Tag", [])}
   ips = i.get("VpcAttributes", {}).get("PrivateIpAddress", {}).get("IpAddress", [""])
   print(i.get("HostName", ""), ips[0], tags.get(cfg["HEALTH_TAG_KEY"], "unknown"),
    i.get("InstanceType", "-"), sep="\t")
def main(cfg, call, command, args):
 if command == "peers":
  peers(cfg, call)
 else:
  print(parameter(cfg, call, args[0], secret=True).rstrip("\n"))
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-peers 755 <<'GPU_INFRA_EOF'
#!/bin/bash
set -euo pipefail
ROOT=${GPU_INFRA_ROOT:-}
# shellcheck source=/dev/null
. "$ROOT/opt/gpu-infra/config.sh"
# shellcheck disable=SC2034 # both read by probe.sh's log
LOG_FILE=$ROOT/var/log/gpu-infra/peers.log CURRENT_STEP=peers
# shellcheck source=/dev/null
. "$ROOT/opt/gpu-infra/probe.sh"
me=$(hostname)
rows=$(mktemp)
peers=$(mktemp)
trap 'rm -f "$rows" "$peers"' EXIT
if [ ! -f "$STATE_DIR/ready" ]; then
rm -f "$ETC_DIR/torchrun.env"
log "this node has not passed its health check: no rank"
exit 75
fi
"$API" peers > "$rows" || { code=$?; [ "$code" -eq 75 ] && log "no node list yet"; exit "$code"; }
if awk -F '\t' '$3 != "healthy" && $3 != "unhealthy" {found = 1} END {exit !found}' "$rows"; then
log "waiting for every node of fleet $FLEET to tell its health"
exit 75
fi
awk -F '\t' '$3 == "healthy"' "$rows" | sort -k 1,1 > "$peers"
rank=$(awk -v me="$me" '$1 == me {print NR - 1}' "$peers")
[ -n "$rank" ] || fail "$me is healthy but not tagged healthy in fleet $FLEET"
declare -A slots=()
while IFS=$'\t' read -r host _ _ type; do
slots[$host]=${GPU_COUNTS[$type]:-}
[ -n "${slots[$host]}" ] || fail "$host: instance type $type is not one of the fleet's"
done < "$peers"
while IFS=$'\t' read -r host ip _; do
echo "$ip slots=${slots[$host]}"
done < "$peers" > "$ETC_DIR/hostfile.new"
mv "$ETC_DIR/hostfile.new" "$ETC_DIR/hostfile"
{
echo "MASTER_ADDR=$(awk -F '\t' 'NR == 1 {print $2}' "$peers")"
echo "MASTER_PORT=$MASTER_PORT"
echo "NNODES=$(wc -l < "$peers")"
echo "NPROC_PER_NODE=${slots[$me]}"
echo "NODE_RANK=$rank"
} > "$ETC_DIR/torchrun.env.new"
mv "$ETC_DIR/torchrun.env.new" "$ETC_DIR/torchrun.env"
replace_block() {
touch "$1"
{
sed '/^# gpu-infra peers begin$/,/^# gpu-infra peers end$/d' "$1"
echo "# gpu-infra peers begin"
printf '%s\n' "$2"
echo "# gpu-infra peers end"
} > "$1.new"
chmod --reference="$1" "$1.new"
mv "$1.new" "$1"
}
replace_block "$ROOT/etc/hosts" "$(awk -F '\t' '{print $2, $1}' "$peers")"
host_key=$(cut -d ' ' -f 1,2 "$ROOT/etc/ssh/ssh_host_ed25519_key.pub")
awk -F '\t' -v key="$host_key" '{print $2 "," $1, key}' "$peers" > "$ETC_DIR/known_hosts"
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-peers.service 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra: refresh the fleet's hostfile, torchrun environment and SSH trust
[Service]
Type=oneshot
ExecStart=/opt/gpu-infra/bin/gpu-infra-peers
SuccessExitStatus=75
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-peers.timer 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra: refresh the fleet's peers every 2 minutes
[Timer]
OnBootSec=2min
OnUnitActiveSec=2min
[Install]
WantedBy=timers.target
GPU_INFRA_EOF
systemctl daemon-reload
systemctl enable gpu-infra-gpu-health.timer
case "$C " in
  *" /etc/systemd/system/gpu-infra-gpu-health.timer "*) systemctl restart --no-block gpu-infra-gpu-health.timer ;;
  *) systemctl start --no-block gpu-infra-gpu-health.timer ;;
esac
