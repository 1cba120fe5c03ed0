"""GPU compute building blocks: fixed GPU nodes (nodes.GpuNodes), auto-scaling fleets
(scaling.GpuScalingGroup), reserved capacity (reserved.ReservedCapacity) and the GPU
validators (validators). Submodules are imported on their own so that the validators load
without pulumi_alicloud."""
