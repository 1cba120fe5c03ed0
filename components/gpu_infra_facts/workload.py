"""How a layout places its nodes and what an environment demands of its resources.

Shared by the product (schema, catalog) and the policy rules, so neither defines them for
the other."""

from __future__ import annotations

from typing import Literal

Demand = Literal["protected", "versioned", "snapshots", "access_logs", "kms_key",
                 "deletion_protection", "private_api"]
"""What an environment may demand of its resources: the `protect` option on data, bucket
versioning, disk snapshots, bucket access logs, a KMS key on disks, deletion protection,
API servers (ACK) with no internet endpoint."""
Placement = Literal["together", "spread"]
"""How a layout places its nodes: `together` (one zone and a LowLatency deployment set: the
nodes of one job exchange data) or `spread` (several zones and an on-demand base: a service
outlives a zone outage or a spot reclaim)."""
