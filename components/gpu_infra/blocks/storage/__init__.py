"""Storage building blocks: ESSD AutoPL data disks and snapshots (disks), the shared file
system (filesystem), OSS buckets (buckets), and the AutoPL formulas (performance).

Import the submodules directly; this package imports nothing, so the config schema can use
the formulas without pulling in Pulumi resources."""
