"""What each fleet's nodes run: the driver route and pinned versions resolved from the stack and
the catalog (one place for the layouts and the validators), and the validators of the
`fleet.image`, `fleet.driver` and way-in settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Network

from gpu_infra import catalog
from gpu_infra.knowhow.findings import Finding, Level
from gpu_infra.schema import FleetCluster
from gpu_infra.schema.compute import ScalingFleet, TrainingFleet
from gpu_infra.schema.node import DriverConfig
from gpu_infra_facts.node_stack import (
    DEFAULT_DRIVER_STACK,
    DEFAULT_IMAGES,
    DRIVER_STACKS,
    FABRIC_MANAGER_FAMILIES,
    GRAPHICS_FAMILIES,
    DriverRoute,
    DriverStack,
    driver_incompatibility,
)


def fleet_types(fleet: TrainingFleet | ScalingFleet) -> list[str]:
    """Every instance type the fleet may launch."""
    if isinstance(fleet, TrainingFleet):
        return [fleet.instance_type]
    return list(fleet.instance_types)


@dataclass(frozen=True)
class DriverPlan:
    """The driver a fleet's nodes get."""

    route: DriverRoute | None
    """None: no route fits (a vws family left on auto)."""
    versions: DriverStack
    """Pinned driver, CUDA and cuDNN."""


def _family_pin(instance_type: str) -> DriverStack:
    return DRIVER_STACKS.get(catalog.family_of(instance_type), DEFAULT_DRIVER_STACK)


def driver_plan(fleet: TrainingFleet | ScalingFleet) -> DriverPlan:
    """The route (`auto` resolved by family) and versions (the stack's, else the first
    type's family pin)."""
    families = {catalog.family_of(t) for t in fleet_types(fleet)}
    route: DriverRoute | None
    if fleet.driver.route != "auto":
        route = fleet.driver.route
    else:
        route = None if families & GRAPHICS_FAMILIES else "auto_install"
    return DriverPlan(route, pinned_stack(fleet_types(fleet)[0], fleet.driver))


def pinned_stack(instance_type: str, settings: DriverConfig) -> DriverStack:
    """The versions `settings` pins, else the family pin of `instance_type`."""
    pin = _family_pin(instance_type)
    return DriverStack(driver=settings.version or pin.driver, cuda=settings.cuda or pin.cuda,
                       cudnn=settings.cudnn or pin.cudnn)


def gpu_counts(fleet: TrainingFleet | ScalingFleet,
               gpu_types: catalog.Lookup) -> dict[str, int]:
    """Instance type -> GPUs the health check expects (a vGPU slice shows as one device)."""
    return {t: gpu_types.gpus_per_node(t) for t in fleet_types(fleet)}


def nvlink_types(fleet: TrainingFleet | ScalingFleet, gpu_types: catalog.Lookup) -> frozenset[str]:
    """The fleet's instance types whose catalog entry says NVLink and that have more than one
    GPU (the health check wants their links active): NVLink joins GPUs to each other, so a
    one-GPU size of an NVLink family (gn8v.4xlarge) has no link to find active."""
    return frozenset(t for t in fleet_types(fleet)
                     if (entry := gpu_types.get(t)) is not None and entry.nvlink
                     and entry.gpu_count > 1)


def may_have_nvswitch(fleet: TrainingFleet | ScalingFleet, gpu_types: catalog.Lookup) -> bool:
    """Whether any of the fleet's types may have NVSwitch (the node checks for itself): as
    the entry says, else by family."""
    def nvswitch(instance_type: str) -> bool:
        entry = gpu_types.get(instance_type)
        if entry is not None and entry.nvswitch is not None:
            return entry.nvswitch
        return catalog.family_of(instance_type) in FABRIC_MANAGER_FAMILIES
    return any(nvswitch(t) for t in fleet_types(fleet))


def _finding(name: str, level: Level, path: str, message: str) -> Finding:
    return Finding(name, level, path, message)


def driver_route_missing(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: a GPU fleet whose nodes would get no driver, or the wrong kind of driver."""
    plan = driver_plan(cluster.fleet)
    families = {catalog.family_of(t) for t in fleet_types(cluster.fleet)}
    graphics = sorted(families & GRAPHICS_FAMILIES)
    tesla = sorted(families - GRAPHICS_FAMILIES)
    if getattr(cluster, "platform", "ecs") == "ack":
        if graphics:
            yield _finding("driver-route-missing", Level.ERROR, "fleet.instance_types",
                           f"ACK installs the Tesla driver only; vws family "
                           f"{', '.join(graphics)} needs the GRID driver: use platform ecs")
        elif cluster.fleet.driver.route not in ("auto", "auto_install"):
            yield _finding("driver-route-missing", Level.ERROR, "fleet.driver.route",
                           f"{cluster.fleet.driver.route}: on ACK the driver is ACK's (installed "
                           "when a node joins, pinned by driver.version); remove route")
        return
    if plan.route is None:
        yield _finding("driver-route-missing", Level.ERROR, "fleet.driver.route",
                       f"vws family {', '.join(graphics)} needs the GRID driver, which the "
                       "auto-install does not provide; set route grid (with grid_package) or "
                       "preinstalled (an image with the GRID driver)")
    elif plan.route == "auto_install" and graphics:
        yield _finding("driver-route-missing", Level.ERROR, "fleet.driver.route",
                       f"auto_install installs the Tesla driver; vws family "
                       f"{', '.join(graphics)} needs grid or preinstalled")
    elif plan.route == "grid" and tesla:
        yield _finding("driver-route-missing", Level.ERROR, "fleet.driver.route",
                       f"grid is for vws families; {', '.join(tesla)} need auto_install or "
                       "preinstalled")


def driver_incompatible(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: a pinned driver known not to work with a family of the fleet, or types whose
    families pin different drivers while the stack pins none."""
    fleet = cluster.fleet
    plan = driver_plan(fleet)
    for family in sorted({catalog.family_of(t) for t in fleet_types(fleet)}):
        reason = driver_incompatibility(family, plan.versions.driver)
        if reason:
            yield _finding("driver-incompatible", Level.ERROR, "fleet.driver.version",
                           f"driver {plan.versions.driver} on {family}: {reason}")
    pins = {_family_pin(t).driver for t in fleet_types(fleet)}
    if fleet.driver.version is None and len(pins) > 1:
        yield _finding("driver-incompatible", Level.ERROR, "fleet.driver.version",
                       f"the fleet's families pin different drivers ({', '.join(sorted(pins))});"
                       " set one version that suits all of them")


def preinstalled_on_public_image(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: route preinstalled on a public image, which carries no GPU driver."""
    fleet = cluster.fleet
    image = fleet.image
    public = image.name is None and image.from_stack is None and (
        image.id is None or image.id in DEFAULT_IMAGES.values()
        or not image.id.startswith("m-"))
    if driver_plan(fleet).route == "preinstalled" and public:
        yield _finding("driver-route-missing", Level.ERROR, "fleet.image",
                       "route preinstalled needs an image with the driver (the baked image or "
                       "a Marketplace GPU image); public images have none")


def _outside(cidr: IPv4Network, vpc: IPv4Network) -> bool:
    return not cidr.subnet_of(vpc)


def admin_cidr_unrouted(cluster: FleetCluster) -> Iterable[Finding]:
    """WARNING: SSH opened to a CIDR outside the VPC, which this stack creates no route to."""
    network = cluster.network
    if network.existing_vpc_id:
        return
    for index, cidr in enumerate(cluster.security.admin_cidrs):
        if _outside(cidr, network.vpc_cidr):
            yield _finding("admin-cidr-unrouted", Level.WARNING, f"security.admin_cidrs[{index}]",
                           f"{cidr} is outside the VPC {network.vpc_cidr} and this stack "
                           "creates no VPN, CEN or peering route to it; reach the nodes with "
                           "Cloud Assistant instead (docs: Platforms, ECS, Reaching the nodes)")


NODE_SOFTWARE_VALIDATORS = (driver_route_missing, driver_incompatible,
                            preinstalled_on_public_image, admin_cidr_unrouted)
"""The node-software validators, in report order."""
