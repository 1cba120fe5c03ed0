#!/bin/sh
# gpu-infra training job of stack training-dev: 1 node(s) of ecs.gn7e-c16g1.4xlarge,
# image registry-vpc.cn-hangzhou.aliyuncs.com/llm-train-mirror/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:c8268a92a69bd500f8be0e665b2630ee006dadaf7bfbc24249141b15ff622755.
# Run on the spot worker (the scaling group spot_scaling_group_id holds it): its gpu-infra-job.service
# runs it in its container, and a node that joins later joins it.
set -eu
set -a
. /etc/gpu-infra/elastic.env
set +a
MASTER_ADDR=127.0.0.1 NNODES=1 NPROC_PER_NODE=1
id=$(date -u +%Y%m%dT%H%M%SZ) d=$GPU_INFRA_JOB_DIR
mkdir -p "$d"
printf '%s\n' "JOB_ID=$id" "RDZV_HOST=$MASTER_ADDR" "RDZV_ID=$RDZV_ID-$id" "NNODES=$NNODES" \
  "NPROC_PER_NODE=$NPROC_PER_NODE" "MAX_RESTARTS=$MAX_RESTARTS" \
  JOB_IMAGE=registry-vpc.cn-hangzhou.aliyuncs.com/llm-train-mirror/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:c8268a92a69bd500f8be0e665b2630ee006dadaf7bfbc24249141b15ff622755 \
  JOB_COMMAND=/mnt/shared/train.py \
  > "$d/job.env.new"
mv "$d/job.env.new" "$d/job.env"
if [ "$GPU_INFRA_JOB_SHARED" != 1 ]; then
  while read -r host _ <&3; do ssh -o BatchMode=yes "$host" "mkdir -p $d && cat > $d/job.env.new && mv $d/job.env.new $d/job.env" < "$d/job.env"; done 3< /etc/gpu-infra/hostfile
fi
echo "job $id: every ready node joins it within 10 s; follow it with journalctl -u gpu-infra-job.service -f"
