"""Stand-in accounts for preflight tests: one where everything a shipped stack asks for is
there, to be spoiled one thing at a time."""

from __future__ import annotations

from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.preflight.demand import read_demand

from .alibaba_standin import Account


def healthy_account(plan: Plan) -> Account:
    """Every type in stock in every planned zone (spot too), versions and add-ons offered at
    their pins, images Available, keys Enabled, bucket names free, contacts activated."""
    demand = read_demand(plan)
    account = Account()
    for fleet in demand.fleets:
        for zone in fleet.zones:
            for kind in fleet.instance_types:
                account.stock.setdefault(zone, set()).add(kind)
                account.spot_stock.setdefault(zone, set()).add(kind)
                account.spot_prices[(kind, zone)] = (1.0, 10.0)
                account.interruptions[(kind, zone)] = 3.0
                account.vcpus[kind] = 4
    if demand.ack_version is not None:
        account.k8s_versions[demand.ack_version.value] = True
    account.addons.update({addon.value: addon.detail for addon in demand.addons})
    account.images.update({image.value: "Available" for image in demand.images})
    account.kms_keys.update({key.value: "Enabled" for key in demand.kms_keys})
    account.contacts.update({c.value: (c.detail, "OK") for c in demand.contacts})
    return account
