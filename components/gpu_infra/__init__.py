"""gpu-infra: Pulumi components for GPU infrastructure on Alibaba Cloud."""
