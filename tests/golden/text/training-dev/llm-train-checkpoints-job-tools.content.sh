#!/bin/bash
# gpu-infra job tools (the job_tools step runs this)
set -euo pipefail
R=${GPU_INFRA_ROOT:-}
w() { mkdir -p "$R${1%/*}" && cat > "$R$1" && chmod "$2" "$R$1"; }
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
NNODES_MIN=1
RDZV_PORT=29400
RDZV_ID=llm-train-gpu
MAX_RESTARTS=3
GPU_INFRA_CHECKPOINT_DIR=/mnt/shared/checkpoints
GPU_INFRA_SPOT_NOTICE=/run/gpu-infra/spot/termination-time
GPU_INFRA_EOF
w /opt/gpu-infra/bin/gpu-infra-spot-watch 755 <<'GPU_INFRA_EOF'
#!/bin/sh
set -u
base=${GPU_INFRA_METADATA:-http://100.100.100.200/latest}
dir=${GPU_INFRA_SPOT_NOTICE_DIR:-/run/gpu-infra/spot}
node=${GPU_INFRA_NODE_NAME:-$(hostname)}
restore=${GPU_INFRA_RESTORE_COMMAND:-}
say() { echo "gpu-infra-spot-watch: $*"; }
nap() { sleep "$1" & wait $!; }
trap 'kill $! 2>/dev/null; exit 0' TERM INT
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
if [ -n "$restore" ]; then
say "restore $node with: $restore"
[ -z "${GPU_INFRA_REPORT_DIR:-}" ] || put "$GPU_INFRA_REPORT_DIR/$node" \
    "released_at=$at
restore=$restore" || say "cannot write the report"
fi
while :; do nap 3600; done
GPU_INFRA_EOF
w /etc/systemd/system/gpu-infra-spot-watch.service 644 <<'GPU_INFRA_EOF'
[Unit]
Description=gpu-infra: turn a spot reclaim notice into the job's last-checkpoint signal
After=network-online.target
Wants=network-online.target

[Service]
EnvironmentFile=/etc/gpu-infra/spot-watch.env
ExecStart=/opt/gpu-infra/bin/gpu-infra-spot-watch
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
GPU_INFRA_EOF
w /etc/gpu-infra/spot-watch.env 644 <<'GPU_INFRA_EOF'
GPU_INFRA_SPOT_NOTICE_DIR=/run/gpu-infra/spot
GPU_INFRA_SPOT_POLL_SECONDS=5
GPU_INFRA_RESTORE_COMMAND='pulumi up --refresh --stack training-dev'
GPU_INFRA_REPORT_DIR=/mnt/shared/.gpu-infra/reclaims
GPU_INFRA_EOF
systemctl daemon-reload
systemctl enable --now --no-block gpu-infra-spot-watch.service
