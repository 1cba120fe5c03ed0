"""Reserved capacity for a fleet's steady base: reserved instance coupons and/or a
capacity guarantee (elasticity assurance or capacity reservation) in one zone."""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.compute import ReservedCapacityConfig
from gpu_infra_facts.allowed import assurance_period


class ReservedCapacity(pulumi.ComponentResource):
    """Reserved capacity for `instance_type`.

    - `config.reserved_instances`: an ecs.ReservedInstance (Linux, term in years,
      Region scope, or Zone scope in `zone_id`).
    - `config.guarantee`: an ecs.ElasticityAssurance (term in months, unlimited use) or an
      ecs.CapacityReservation (until released), both in `zone_id` and open to matching
      instances (match criteria Open).

    Reserved instances and elasticity assurances are paid for a term and non-refundable:
    the provider's delete of a reserved instance is a no-op (it keeps billing) and a
    replacement buys another, so both are Pulumi-protected: a change that would replace or
    delete them stops the plan instead (see docs/update-policies.md).

    Outputs: `reserved_instance_id`, `guarantee_id` (None when not asked for).
    """

    TYPE = "gpu-infra:compute:ReservedCapacity"
    reserved_instance: alicloud.ecs.ReservedInstance | None
    guarantee: alicloud.ecs.ElasticityAssurance | alicloud.ecs.CapacityReservation | None

    def __init__(self, name: str, *, instance_type: str, zone_id: str,
                 config: ReservedCapacityConfig, conventions: Conventions,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        prepaid = pulumi.ResourceOptions(parent=self, protect=True)
        coupons = config.reserved_instances
        self.reserved_instance = None if coupons is None else alicloud.ecs.ReservedInstance(
            child_name(name, "ri"), reserved_instance_name=child_name(name, "ri"),
            instance_type=instance_type, instance_amount=coupons.count,
            offering_type=coupons.offering_type, period=coupons.period_years,
            period_unit="Year", platform="Linux", scope=coupons.scope,
            zone_id=zone_id if coupons.scope == "Zone" else None,
            tags=conventions.tags_for(child_name(name, "ri")), opts=prepaid)
        guarantee = config.guarantee
        self.guarantee = None
        if guarantee is not None and guarantee.kind == "elasticity_assurance":
            period, period_unit = assurance_period(guarantee.period_months)
            self.guarantee = alicloud.ecs.ElasticityAssurance(
                child_name(name, "ea"), private_pool_options_name=child_name(name, "ea"),
                instance_type=instance_type, instance_amount=guarantee.count,
                zone_ids=[zone_id], period=period, period_unit=period_unit,
                assurance_times="Unlimited", private_pool_options_match_criteria="Open",
                tags=conventions.tags_for(child_name(name, "ea")), opts=prepaid)
        elif guarantee is not None:
            self.guarantee = alicloud.ecs.CapacityReservation(
                child_name(name, "cr"), capacity_reservation_name=child_name(name, "cr"),
                instance_type=instance_type, instance_amount=guarantee.count,
                zone_ids=[zone_id], end_time_type="Unlimited", match_criteria="Open",
                platform="linux", tags=conventions.tags_for(child_name(name, "cr")),
                opts=child)
        self.reserved_instance_id = self.reserved_instance.id if self.reserved_instance else None
        self.guarantee_id = self.guarantee.id if self.guarantee else None
        self.register_outputs({"reserved_instance_id": self.reserved_instance_id,
                               "guarantee_id": self.guarantee_id})


__all__ = ["ReservedCapacity"]
