"""ACK add-ons as cs.KubernetesAddon, each with a pinned version and its config, checked
against the add-ons the cluster offers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import child_name
from gpu_infra_facts.ack import ADDONS


class UnknownAddon(Exception):
    """An add-on the cluster does not offer (a wrong name, or one the region lacks)."""


def checked_name(name: str, offered: Sequence[str]) -> str:
    """`name`, if the cluster offers it; else UnknownAddon naming it and the nearest
    offers: `pulumi preview` and `up` stop on that line before anything is installed."""
    if name in offered:
        return name
    near = sorted(o for o in offered if o.split("-")[0] == name.split("-")[0])[:5]
    raise UnknownAddon(f"ack add-on {name!r} is not offered by this cluster "
                       f"(cs.get_kubernetes_addons); similar: {', '.join(near) or 'none'}; "
                       "the name is pinned in gpu_infra_facts/ack.py")


def _checked(name: str, offered: pulumi.Output[Sequence[str]]) -> pulumi.Output[str]:
    return offered.apply(lambda names: checked_name(name, names))


class AckAddons(pulumi.ComponentResource):
    """One cs.KubernetesAddon per name in `names` (gpu_infra_facts.ack.ADDONS), at the
    version `versions` gives (default the pinned one) with its config (`configs` override or
    extend the documented one; values may be outputs). Every name is checked against the
    add-ons the cluster offers (cs.get_kubernetes_addons) first: a wrong name fails the
    preview with one line, not a half-applied add-on (TF issue #5854: a failed add-on apply
    is still persisted). The data source lists names with their current and next version
    only, so a version the region does not offer is reported by ACK at `pulumi up`
    (UNCONFIRMED versions, see the facts module).

    Outputs: `addons` (name -> version).
    """

    TYPE = "gpu-infra:ack:AckAddons"

    def __init__(self, name: str, *, cluster_id: pulumi.Input[str], names: Sequence[str],
                 versions: Mapping[str, str],
                 configs: Mapping[str, Mapping[str, Any]] | None = None,
                 depends_on: Sequence[pulumi.Resource] = (),
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        offered = alicloud.cs.get_kubernetes_addons_output(
            cluster_id=cluster_id, opts=pulumi.InvokeOutputOptions(parent=self)).names
        configs = configs or {}
        self.addons: dict[str, alicloud.cs.KubernetesAddon] = {}
        for addon_name in names:
            fact = ADDONS[addon_name]
            config = {**fact.config, **configs.get(addon_name, {})}
            self.addons[addon_name] = alicloud.cs.KubernetesAddon(
                child_name(name, addon_name), cluster_id=cluster_id,
                name=_checked(addon_name, offered),
                version=versions[addon_name],
                config=pulumi.Output.json_dumps(config, sort_keys=True) if config else None,
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)))
        self.register_outputs({"addons": {n: versions[n] for n in names}})
