"""GPU compute building blocks: fixed GPU nodes (nodes.GpuNodes), auto-scaling fleets
(scaling.GpuScalingGroup), reserved capacity (reserved.ReservedCapacity) and the default
image (images)."""
