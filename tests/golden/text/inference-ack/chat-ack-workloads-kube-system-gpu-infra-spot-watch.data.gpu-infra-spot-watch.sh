#!/bin/sh
# gpu-infra-spot-watch: turn a spot reclaim notice into the job's last-checkpoint signal, on an
# ECS node (systemd unit) and on an ACK node (DaemonSet) alike. POSIX sh and curl.
#
# Every GPU_INFRA_SPOT_POLL_SECONDS (5) it asks instance metadata, in hardened mode (a session
# token first), for instance/spot/termination-time; an error or 404 means no reclaim is
# scheduled. When a time appears (about 5 minutes before the release) it writes it once,
# atomically, to $GPU_INFRA_SPOT_NOTICE_DIR/termination-time (/run/gpu-infra/spot): training
# loops check that file between steps and save a checkpoint. With GPU_INFRA_REPORT_DIR set
# (ECS: on the shared file system) it records the release time in $GPU_INFRA_REPORT_DIR/<node>.
# With
# GPU_INFRA_LEAVE_COMMAND set (ECS: stop this node's job container) it then waits for a
# complete checkpoint newer than the notice under $GPU_INFRA_CHECKPOINT_DIR (a COMPLETE file),
# at most GPU_INFRA_LEAVE_SECONDS (240), and runs it: the node leaves the job before its
# release, so the others restart from that checkpoint at once. Other settings:
# GPU_INFRA_METADATA (base URL), GPU_INFRA_NODE_NAME (default the host name).
set -u
base=${GPU_INFRA_METADATA:-http://100.100.100.200/latest}
dir=${GPU_INFRA_SPOT_NOTICE_DIR:-/run/gpu-infra/spot}
node=${GPU_INFRA_NODE_NAME:-$(hostname)}
say() { echo "gpu-infra-spot-watch: $*"; }

# nap SECONDS: a sleep that SIGTERM ends at once (a shell waiting for a foreground child, or
# running as a container's PID 1, would not act on it)
nap() { sleep "$1" & wait $!; }
trap 'kill $! 2>/dev/null; exit 0' TERM INT

# put FILE TEXT: write FILE whole or not at all (readers never see half of it)
put() { mkdir -p "${1%/*}" && printf '%s\n' "$2" > "$1.$$" && mv -f "$1.$$" "$1"; }

released_at() {
  token=$(curl -fsS -m 2 -X PUT "$base/api/token" \
    -H "X-aliyun-ecs-metadata-token-ttl-seconds: 60") || return 1
  curl -fsS -m 2 -H "X-aliyun-ecs-metadata-token: $token" \
    "$base/meta-data/instance/spot/termination-time"
}

say "watching $base for the spot notice"
until at=$(released_at 2>/dev/null) && [ -n "$at" ]; do
  nap "${GPU_INFRA_SPOT_POLL_SECONDS:-5}"
done
put "$dir/termination-time" "$at" || say "cannot write $dir"
say "reclaim notice: $node is released at $at; signal in $dir/termination-time"
[ -z "${GPU_INFRA_REPORT_DIR:-}" ] || put "$GPU_INFRA_REPORT_DIR/$node" "released_at=$at" \
  || say "cannot write the report"
leave=${GPU_INFRA_LEAVE_COMMAND:-}
if [ -n "$leave" ]; then
  waited=0
  until [ "$waited" -ge "${GPU_INFRA_LEAVE_SECONDS:-240}" ] || [ -n "$(find \
      "${GPU_INFRA_CHECKPOINT_DIR:-/nonexistent}" -mindepth 2 -maxdepth 2 -name COMPLETE \
      -newer "$dir/termination-time" 2>/dev/null | head -n 1)" ]; do
    nap 1
    waited=$((waited + 1))
  done
  say "leaving the job after ${waited} s: $leave"
  sh -c "$leave" || say "could not leave the job"
fi
while :; do nap 3600; done
