#!/bin/sh
# gpu-infra training job of stack training-prod: 8 node(s) of ecs.ebmgn7ex.32xlarge,
# image llm-pretrain-registry-acr-registry-vpc.cn-beijing.cr.aliyuncs.com/llm-pretrain-mirror/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:c8268a92a69bd500f8be0e665b2630ee006dadaf7bfbc24249141b15ff622755.
# Run on node 0 (the stack output node0_shell opens a shell there): every node's gpu-infra-job.service
# runs it in its container, and a node that joins later joins it.
set -eu
/opt/gpu-infra/bin/gpu-infra-peers
set -a
. /etc/gpu-infra/torchrun.env
. /etc/gpu-infra/elastic.env
set +a
id=$(date -u +%Y%m%dT%H%M%SZ) d=$GPU_INFRA_JOB_DIR
mkdir -p "$d"
printf '%s\n' "JOB_ID=$id" "RDZV_HOST=$MASTER_ADDR" "RDZV_ID=$RDZV_ID-$id" "NNODES=$NNODES" \
  "NPROC_PER_NODE=$NPROC_PER_NODE" "MAX_RESTARTS=$MAX_RESTARTS" \
  JOB_IMAGE=llm-pretrain-registry-acr-registry-vpc.cn-beijing.cr.aliyuncs.com/llm-pretrain-mirror/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:c8268a92a69bd500f8be0e665b2630ee006dadaf7bfbc24249141b15ff622755 \
  JOB_COMMAND=/mnt/shared/train.py \
  > "$d/job.env.new"
mv "$d/job.env.new" "$d/job.env"
if [ "$GPU_INFRA_JOB_SHARED" != 1 ]; then
  while read -r host _ <&3; do ssh -o BatchMode=yes "$host" "mkdir -p $d && cat > $d/job.env.new && mv $d/job.env.new $d/job.env" < "$d/job.env"; done 3< /etc/gpu-infra/hostfile
fi
echo "job $id: every ready node joins it within 10 s; follow it with journalctl -u gpu-infra-job.service -f"
