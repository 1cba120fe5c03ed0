#!/usr/bin/env python3
# gpu_infra_health: the GPU health check after boot, run by gpu-infra-gpu-health.timer (the
# node tools install both). Python 3.6+ standard library; the cloud calls are gpu-infra-api's
# (gpu_infra_node.api), its settings /opt/gpu-infra/config.sh.
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
    """`command`'s stdout; RuntimeError when it fails or runs past PROBE_SECONDS."""
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
    """The GPU count config.sh pins for `instance_type` (its GPU_COUNTS array)."""
    with open(ROOT + "/opt/gpu-infra/config.sh", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("readonly -A GPU_COUNTS="):
                return dict((t, int(n)) for t, n in GPU_COUNTS.findall(line)).get(instance_type)
    return None


def gpu_faults(run_command: Run, expected: Optional[int]) -> List[str]:
    """nvidia-smi's view: the driver answers, every GPU answers, no uncorrected ECC."""
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
    """Critical XIDs in this boot's kernel log (they stay a fault until the node reboots)."""
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
    """Every eRDMA device's port 1 is ACTIVE, and there is at least one."""
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
    """The bootstrap's outcome from its markers: no fault once it is ready, its failed step
    once it ended unhealthy, None while it has not finished."""
    try:
        with open(STATE_DIR + "/unhealthy", encoding="utf-8") as handle:
            return ["the bootstrap ended unhealthy (step {})".format(
                handle.read().strip()[:60] or "unknown")]
    except OSError:
        pass
    return [] if os.path.exists(STATE_DIR + "/ready") else None


def check(cfg: Dict[str, str], instance_type: str, run_command: Run = run) -> List[str]:
    """Every fault the node has now (empty: healthy)."""
    faults = gpu_faults(run_command, expected_gpus(instance_type))
    faults += xid_faults(run_command)
    if cfg.get("ERDMA") == "1":
        faults += erdma_faults()
    return faults


def group_id(node: Any, cfg: Dict[str, str], name: str) -> str:
    """The CloudMonitor group `name`'s id (asked once, then kept in the state directory)."""
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
    """The metric; on a fault also the event, the health tag and ESS's health status."""
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
    # beside this file on the node (the node tools install both), not a package module
    from gpu_infra_node import api  # type: ignore[import-not-found]

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
