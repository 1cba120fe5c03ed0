"""`fleet.image` and `fleet.driver`: schema errors, the resolved driver plan, and the
node-software validators."""

from __future__ import annotations

import pytest

from gpu_infra.catalog import CATALOG_ONLY
from gpu_infra.knowhow import run_validators
from gpu_infra.knowhow.node_software import (
    driver_plan,
    gpu_counts,
    may_have_nvswitch,
    nvlink_types,
)
from gpu_infra.schema import ConfigError
from gpu_infra_facts.node_stack import DEFAULT_DRIVER_STACK, DEFAULT_IMAGES

from .conftest import BASE_INFERENCE, BASE_RENDERING, BASE_TRAINING, cluster_config, merged

GRID = BASE_RENDERING["fleet"]["driver"]


def training(**fleet):
    return merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], **fleet})


def problems(cluster) -> list[str]:
    with pytest.raises(ConfigError) as error:
        cluster_config(cluster)
    return error.value.problems


def findings(cluster, name: str) -> list[str]:
    return [f.line() for f in run_validators(cluster_config(cluster)) if f.validator == name]


def test_defaults_are_the_pinned_public_image_and_the_auto_install():
    fleet = cluster_config(BASE_TRAINING).fleet
    assert fleet.image.pinned_id == DEFAULT_IMAGES["ubuntu_22_04"]
    assert driver_plan(fleet).route == "auto_install"
    assert driver_plan(fleet).versions == DEFAULT_DRIVER_STACK


def test_image_choices():
    alinux = cluster_config(training(image={"os": "alinux_3"})).fleet.image
    assert alinux.pinned_id == DEFAULT_IMAGES["alinux_3"]
    assert cluster_config(training(image={"id": "m-abc123"})).fleet.image.pinned_id == "m-abc123"
    assert cluster_config(training(image={"name": "gpu-baked"})).fleet.image.pinned_id is None


@pytest.mark.parametrize(("image", "expected"), [
    ({"id": "m-1", "name": "x1"},
     "gpu-infra:cluster.fleet.image.id: set one of id, name and from_stack, not id and name"),
    ({"name": "x1", "from_stack": "image-a100"}, "gpu-infra:cluster.fleet.image.name: set one "
     "of id, name and from_stack, not name and from_stack"),
    ({"id": "ubuntu-latest"}, "gpu-infra:cluster.fleet.image.id: 'ubuntu-latest' is not an "
                              "image id"),
    ({"os": "centos_7"}, "gpu-infra:cluster.fleet.image.os: input should be 'ubuntu_22_04' "
                         "or 'alinux_3'"),
])
def test_image_errors(image, expected):
    assert any(line.startswith(expected) for line in problems(training(image=image)))


@pytest.mark.parametrize(("driver", "expected"), [
    ({"route": "grid"}, "driver.grid_package: required with route grid"),
    ({"route": "grid", "grid_package": "oss://b-1/k"}, "driver.version: required with route"),
    ({"grid_package": "oss://b-1/k"}, "driver.grid_package: only used with route grid"),
    ({"route": "preinstalled", "cuda": "12.4.1"}, "driver.cuda: only the auto_install route"),
    ({"version": "latest"}, "driver.version: string should match pattern"),
    ({"route": "nvidia"}, "driver.route: input should be 'auto', 'auto_install', "
                          "'preinstalled' or 'grid'"),
])
def test_driver_errors(driver, expected):
    lines = problems(training(driver=driver))
    assert any("fleet.driver" in line and expected in line for line in lines), lines


def test_stack_pins_override_the_family_pin():
    fleet = cluster_config(training(driver={"version": "535.183.01", "cuda": "12.2.2"})).fleet
    stack = driver_plan(fleet).versions
    assert (stack.driver, stack.cuda, stack.cudnn) == (
        "535.183.01", "12.2.2", DEFAULT_DRIVER_STACK.cudnn)


def test_vws_fleet_without_a_route_is_an_error():
    bare = merged(BASE_RENDERING)
    del bare["fleet"]["driver"]
    lines = findings(bare, "driver-route-missing")
    assert lines == ["ERROR driver-route-missing: fleet.driver.route: vws family vgn7i-vws "
                     "needs the GRID driver, which the auto-install does not provide; set "
                     "route grid (with grid_package) or preinstalled (an image with the GRID "
                     "driver)"]
    assert findings(BASE_RENDERING, "driver-route-missing") == []


def test_wrong_kind_of_driver_route_is_an_error():
    vws = merged(BASE_RENDERING, fleet={**BASE_RENDERING["fleet"],
                                        "driver": {"route": "auto_install"}})
    assert "vws family vgn7i-vws needs grid or preinstalled" in findings(
        vws, "driver-route-missing")[0]
    tesla = training(driver={**GRID, "grid_package": "oss://t01-dev-datasets/grid.run"})
    assert "grid is for vws families; gn7i need auto_install" in findings(
        tesla, "driver-route-missing")[0]


def test_preinstalled_on_a_public_image_is_an_error():
    assert findings(training(driver={"route": "preinstalled"}), "driver-route-missing")
    baked = training(driver={"route": "preinstalled"}, image={"name": "gpu-baked"})
    assert findings(baked, "driver-route-missing") == []


@pytest.mark.parametrize(("instance_type", "version", "broken"), [
    ("ecs.gn7-c12g1.3xlarge", "515.65.01", True),
    ("ecs.gn7-c12g1.3xlarge", "510.47.03", True),
    ("ecs.gn7-c12g1.3xlarge", "525.125.06", False),
    ("ecs.ebmgn7e.32xlarge", "460.32.03", True),
    ("ecs.ebmgn7e.32xlarge", "460.73.01", False),
    ("ecs.gn7i-c8g1.2xlarge", "515.65.01", False),
])
def test_known_driver_incompatibilities(instance_type, version, broken):
    lines = findings(training(instance_type=instance_type, nodes=1,
                              driver={"version": version}), "driver-incompatible")
    assert bool(lines) is broken, lines
    if broken:
        assert lines[0].startswith("ERROR driver-incompatible: fleet.driver.version: driver "
                                   f"{version} on ")


def test_health_expectations_per_instance_type():
    fleet = cluster_config(merged(BASE_INFERENCE, fleet={"instance_types": [
        "ecs.gn7i-c8g1.2xlarge", "ecs.gn6i-c24g1.24xlarge"]})).fleet
    assert gpu_counts(fleet, CATALOG_ONLY) == {"ecs.gn7i-c8g1.2xlarge": 1,
                                               "ecs.gn6i-c24g1.24xlarge": 4}
    assert may_have_nvswitch(fleet, CATALOG_ONLY) is False
    assert may_have_nvswitch(cluster_config(training(instance_type="ecs.ebmgn7ex.32xlarge")).fleet,
                             CATALOG_ONLY)


def test_admin_cidr_outside_the_vpc_is_a_warning():
    cluster = merged(BASE_TRAINING, security={"admin_cidrs": ["192.168.100.0/24",
                                                              "10.1.2.0/24"]})
    assert findings(cluster, "admin-cidr-unrouted") == [
        "WARNING admin-cidr-unrouted: security.admin_cidrs[0]: 192.168.100.0/24 is outside "
        "the VPC 10.1.0.0/16 and this stack creates no VPN, CEN or peering route to it; reach "
        "the nodes with Cloud Assistant instead (docs: Platforms, ECS, Reaching the nodes)"]


@pytest.mark.parametrize("instance_type, checked", [
    ("ecs.gn7e-c16g1.4xlarge", False),  # training-dev's: one GPU of an NVLink family
    ("ecs.gn8v-8x.48xlarge", True),
    ("ecs.gn7i-c8g1.2xlarge", False)])  # no NVLink at all
def test_nvlink_is_checked_only_where_more_than_one_gpu_is_on_it(instance_type, checked):
    fleet = cluster_config(training(instance_type=instance_type)).fleet
    assert (instance_type in nvlink_types(fleet, CATALOG_ONLY)) is checked
