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
RDZV_PORT=29400
RDZV_ID=llm-pretrain-gpu
MAX_RESTARTS=3
GPU_INFRA_CHECKPOINT_DIR=/mnt/shared/checkpoints
GPU_INFRA_SPOT_NOTICE=/run/gpu-infra/spot/termination-time
GPU_INFRA_EOF
