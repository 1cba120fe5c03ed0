"""Shared fixtures: build stack configs in code and plan them under the mock engine."""

from __future__ import annotations

import contextlib
import copy
import gc
import importlib
import inspect
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from .process_guard import guarded, no_processes

if TYPE_CHECKING:  # imported where used: xdist's controller loads this file and runs no test
    from gpu_infra_tools.plan.engine import Plan

PROJECT_DIR = Path(__file__).resolve().parent.parent
STACKS_DIR = PROJECT_DIR / "stacks"

BASE_TRAINING: dict[str, Any] = {
    "name": "t01",
    "layout": "training",
    "tags": {"CostCenter": "cc-1", "Owner": "team-a"},
    "network": {"vpc_cidr": "10.1.0.0/16", "zones": ["cn-hangzhou-i"]},
    "fleet": {"instance_type": "ecs.gn7i-c8g1.2xlarge", "nodes": 2},
}
BASE_INFERENCE: dict[str, Any] = {
    "name": "i01",
    "layout": "inference",
    "tags": {"CostCenter": "cc-1", "Owner": "team-a"},
    "network": {"vpc_cidr": "10.2.0.0/16", "zones": ["cn-hangzhou-i", "cn-hangzhou-j"]},
    "security": {"service_ports": [8000], "client_cidrs": ["10.100.0.0/16"]},
    "fleet": {"instance_types": ["ecs.gn7i-c8g1.2xlarge"]},
}

BASE_RENDERING: dict[str, Any] = {
    "name": "r01",
    "layout": "rendering",
    "tags": {"CostCenter": "cc-1", "Owner": "team-a"},
    "network": {"vpc_cidr": "10.3.0.0/16", "zones": ["cn-hangzhou-i"]},
    "fleet": {"instance_types": ["ecs.vgn7i-vws-m4.xlarge"],
              "driver": {"route": "grid", "version": "535.161.07",
                         "grid_package": "oss://r01-dev-datasets/drivers/grid.run"}},
}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    """Fixtures of a test not marked slow start no process either (tests/process_guard.py)."""
    if not guarded(item):
        return (yield)
    with no_processes(item.nodeid):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """A test not marked slow starts no process (tests/process_guard.py)."""
    if not guarded(item):
        return (yield)
    with no_processes(item.nodeid):
        return (yield)


@pytest.hookimpl(optionalhook=True)  # pytest -p no:xdist (tools/land's regeneration) has none
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadscope` (make test, make test-fast) a module's tests go to one
    worker, and so do the modules of a group that share set-up; the longest unit first
    (tests/scheduling.py)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from .scheduling import ModulesAndGroups

    return ModulesAndGroups(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """With GPU_INFRA_RECORD_DURATIONS=1 (`make durations`) the run that sees every test's
    report (xdist's controller, or the only process) records the modules' seconds into
    tests/durations.json, by which the scheduler hands out the longest unit first."""
    if os.environ.get("GPU_INFRA_RECORD_DURATIONS") == "1" and not hasattr(config, "workerinput"):
        from .scheduling import DURATIONS, DurationRecorder

        config.pluginmanager.register(DurationRecorder(DURATIONS), "gpu-infra-durations")


@pytest.fixture(scope="session")
def strict_mypy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """`mypy --strict`'s report lines on each program tests/strict_programs.py lists, by file
    name; one run per test process, for the modules of the group "strict-mypy" (one worker:
    tests/scheduling.py)."""
    from .strict_programs import CACHE, type_check

    return type_check(tmp_path_factory.mktemp("strict-programs"), CACHE)


def utc_in(days: float) -> str:
    """An ESS launch time (`YYYY-MM-DDThh:mmZ`) `days` from now: schedules must lie within
    the next 90 days, so tests cannot use fixed dates."""
    moment = datetime.now(timezone.utc) + timedelta(days=days)
    return moment.strftime("%Y-%m-%dT%H:%MZ")


def merged(base: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """A deep copy of `base` with top-level sections replaced or (for dicts) updated."""
    result = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key].update(value)
        else:
            result[key] = value
    return result


def write_stack(directory: Path, name: str, cluster: dict[str, Any],
                region: str = "cn-hangzhou") -> Path:
    """Write `Pulumi.<name>.yaml` holding `cluster` and return its path."""
    path = directory / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump(
        {"config": {"alicloud:region": region, "gpu-infra:cluster": cluster}}, sort_keys=False))
    return path


@pytest.fixture
def plan_cluster(tmp_path: Path, request: pytest.FixtureRequest):
    """plan_cluster(cluster_dict, region=...) -> Plan of the real program under mocks.

    A cluster planned before in this process (the same stack file beside the same stack
    files) is not planned again: the test gets a fresh copy of that plan (tests/shipped.py).
    A test that uses monkeypatch (itself or through a fixture) may have changed what the
    program does, so its plans are always made afresh."""
    from gpu_infra_tools.plan.engine import run_plan

    from .shipped import planned_once

    plan = run_plan if "monkeypatch" in request.fixturenames else planned_once

    def _plan(cluster: dict[str, Any], region: str = "cn-hangzhou",
              name: str = "test") -> Plan:
        return plan(write_stack(tmp_path, name, cluster, region))

    return _plan


def cluster_config(cluster: dict[str, Any], region: str = "cn-hangzhou"):
    """A validated ClusterConfig from a cluster dict (ConfigError if invalid)."""
    from gpu_infra.schema import parse_cluster_config

    return parse_cluster_config({"alicloud:region": region, "gpu-infra:cluster": cluster})


@pytest.fixture
def record():
    """record(build, cluster=BASE_TRAINING) -> resources registered while `build()` ran under
    the mock engine (for testing one building block on its own)."""
    from gpu_infra_tools.plan.engine import run_under_mocks

    def _record(build, cluster: dict[str, Any] | None = None, region: str = "cn-hangzhou"):
        resources, _ = run_under_mocks(cluster_config(cluster or BASE_TRAINING, region),
                                       "test", build)
        return resources

    return _record


def provider_class(type_token: str) -> type:
    """alicloud:vpc/switch:Switch -> pulumi_alicloud.vpc.Switch;
    kubernetes:storage.k8s.io/v1:StorageClass -> pulumi_kubernetes.storage.v1.StorageClass;
    pulumi:providers:kubernetes -> pulumi_kubernetes.Provider; tls:... -> pulumi_tls."""
    if type_token == "pulumi:providers:kubernetes":
        return importlib.import_module("pulumi_kubernetes").Provider
    package, module_path, name = type_token.split(":")
    if package == "kubernetes":
        group, version = module_path.split("/")
        module = importlib.import_module(
            f"pulumi_kubernetes.{group.split('.')[0]}.{version}")
        return getattr(module, name)
    if package == "tls":  # tls:index/privateKey:PrivateKey -> pulumi_tls.PrivateKey
        return getattr(importlib.import_module("pulumi_tls"), name)
    module = importlib.import_module(f"pulumi_alicloud.{module_path.split('/')[0]}")
    return getattr(module, name)


def takes_tags(type_token: str) -> bool:
    """Whether the provider's resource class accepts a `tags` argument."""
    return "tags" in inspect.signature(provider_class(type_token)._internal_init).parameters


def pytest_collection(session: pytest.Session) -> None:
    """pytest rewrites a test module's asserts when it first imports it, and keeps the result
    in __pycache__: on a fresh clone every xdist worker would rewrite every module, the same
    ones at the same time (about 3 s of CPU each). Before collecting the whole suite each
    worker imports the test modules from its own place in their list on (tests/scheduling.py),
    so each rewrites about its share and finds the rest written by the others. A module that
    fails to import is left to the collection, which reports it."""
    from .scheduling import imports_first

    tests = Path(__file__).parent
    args = [session.config.invocation_params.dir / arg for arg in session.config.args]
    if args != [tests]:
        return
    for module in imports_first(sorted(tests.glob("test_*.py")),
                                os.environ.get("PYTEST_XDIST_WORKER", "gw0"),
                                int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))):
        with contextlib.suppress(Exception):
            importlib.import_module(f"{__package__}.{module.stem}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection loaded (the packages, the SDKs, the test modules) lives until the
    session ends: out of the cyclic collector's reach, its full collections scan only what the
    tests make (as the console script does for a command; about a tenth of the fast tier's
    CPU)."""
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """And what the tests made is moved out of its reach once the session is over, so the
    collections while the interpreter shuts down scan nothing (as the console script does: in
    each process of the fast tier they took about 2 s, at the end of the run)."""
    gc.freeze()
