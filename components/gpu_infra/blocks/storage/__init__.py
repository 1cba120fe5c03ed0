"""Storage building blocks: ESSD AutoPL data disks and snapshots (disks), the shared file
system (filesystem), OSS buckets (buckets)."""
