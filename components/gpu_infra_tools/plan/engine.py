"""The offline plan: run the real Pulumi program (the packaged gpu_infra.program, so a plan
works from any directory) under the SDK's mock engine and record every resource it registers
(type, name, parent, inputs, dependencies, options)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sysconfig
import threading
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi import _types as sdk_types
from pulumi.runtime import known_types, mocks, rpc
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.settings import ROOT, SETTINGS
from pulumi.runtime.stack import Stack, run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from gpu_infra.knowhow import Finding, errors_in
from gpu_infra.nodeplan import judge_stack
from gpu_infra.program import judged_already
from gpu_infra.program import run as run_program
from gpu_infra.schema import (
    CLUSTER_KEY,
    PROJECT,
    REGION_KEY,
    SECRET_PLACEHOLDER,
    ClusterConfig,
    ConfigError,
    load_cluster_config,
)
from gpu_infra_tools.plan.fake_cloud import FakeCloud
from gpu_infra_tools.plan.stack_refs import image_stack_problems

STACK_TYPE = "pulumi:pulumi:Stack"

UNKNOWN_MARK = "<unknown>"
"""What an input not known at plan time shows as."""


class ProgramError(Exception):
    """The Pulumi program itself failed; the message names the component it failed in."""


class ValidatorErrors(Exception):
    """Named validators found ERRORs; the stack is not built."""

    def __init__(self, findings: list[Finding]):
        super().__init__("\n".join(finding.line() for finding in findings))
        self.findings = findings


@dataclass
class PlannedResource:
    """One resource the program would create."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str | None
    inputs: dict[str, Any]
    """Inputs in wire form (camelCase); secrets shown as SECRET_PLACEHOLDER."""
    dependencies: list[str]
    protect: bool = False
    retain_on_delete: bool = False
    id: str | None = None
    delete_before_replace: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    """URNs this resource was known by before (resource option `aliases`)."""
    replace_with: list[str] = field(default_factory=list)
    """URNs whose replacement replaces this resource too (resource option `replace_with`)."""
    deleted_with: str | None = None
    """URN of the resource the cloud deletes this one with (resource option `deleted_with`:
    Pulumi calls no Delete for it when that one goes)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form used by `plan --json` (resource options only when set)."""
        record = {"urn": self.urn, "type": self.type, "name": self.name, "custom": self.custom,
                  "parent": self.parent, "id": self.id, "protect": self.protect,
                  "retainOnDelete": self.retain_on_delete, "dependencies": self.dependencies,
                  "inputs": self.inputs}
        for key, value in (("deleteBeforeReplace", self.delete_before_replace),
                           ("ignoreChanges", self.ignore_changes),
                           ("replaceOnChanges", self.replace_on_changes),
                           ("aliases", self.aliases), ("replaceWith", self.replace_with),
                           ("deletedWith", self.deleted_with)):
            if value:
                record[key] = value
        return record


@dataclass
class Plan:
    """Everything the program would do for one stack, and the validator findings on the way
    (tools/review adds the cost and the policy verdicts)."""

    project: str
    stack_name: str
    """The Pulumi stack name (`plan --json` key `stack`)."""
    cluster: ClusterConfig
    """The stack's validated cluster config."""
    resources: list[PlannedResource]
    outputs: dict[str, Any]
    secret_keys: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    source: str = ""
    """The stack file, as given."""

    def by_type(self, type_token: str) -> list[PlannedResource]:
        """Resources of one type token, in registration order."""
        return [r for r in self.resources if r.type == type_token]

    def one(self, type_token: str) -> PlannedResource:
        """The single resource of `type_token` (AssertionError if not exactly one)."""
        found = self.by_type(type_token)
        assert len(found) == 1, f"expected one {type_token}, found {len(found)}"
        return found[0]

    def to_json(self) -> dict[str, Any]:
        """The plan's record; `plan --json` writes Review.to_json, which adds the policy
        verdicts and the cost after the findings."""
        custom = [r for r in self.resources if r.custom]
        counts: dict[str, int] = {}
        for resource in custom:
            counts[resource.type] = counts.get(resource.type, 0) + 1
        return {
            "project": self.project, "stack": self.stack_name,
            "layout": self.cluster.layout, "environment": self.cluster.environment,
            "region": self.cluster.region,
            "summary": {"create": len(custom), "components": len(self.resources) - len(custom),
                        "byType": dict(sorted(counts.items()))},
            "secretKeys": self.secret_keys,
            "findings": [{"validator": f.validator, "level": f.level.value, "path": f.path,
                          "message": f.message} for f in self.findings],
            "outputs": self.outputs,
            "resources": [r.to_json() for r in self.resources],
        }


class _RecordingMonitor(mocks.MockMonitor):
    """The SDK's mock monitor, also keeping what the engine would be told."""

    def __init__(self, cloud: FakeCloud):
        self.cloud_mocks = _CloudMocks(cloud)
        super().__init__(self.cloud_mocks)
        self.recorded: list[PlannedResource] = []
        self._worker_loops: set[asyncio.AbstractEventLoop] = set()
        self._lock = threading.Lock()

    def close_worker_loops(self) -> None:
        """Close the event loops the SDK opened in worker threads; left open, they fail
        noisily when garbage-collected at interpreter exit."""
        with self._lock:
            for loop in self._worker_loops:
                if not loop.is_running():
                    loop.close()
            self._worker_loops.clear()

    def _open_worker_loop(self) -> None:
        """Give this worker thread an open event loop (a thread reused from an earlier plan
        holds one that plan closed) and remember it for closing."""
        if threading.current_thread() is threading.main_thread():
            return
        loop = _ensure_event_loop()
        if loop.is_closed():
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
        with self._lock:
            self._worker_loops.add(loop)

    def Invoke(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._open_worker_loop()
        return mocks.MockMonitor.Invoke(self, request)  # the SDK's (untyped) method

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._open_worker_loop()
        return mocks.MockMonitor.ReadResource(self, request)  # a stack reference's outputs

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._open_worker_loop()
        response = mocks.MockMonitor.RegisterResource(self, request)
        if request.type != STACK_TYPE:
            self.recorded.append(PlannedResource(
                urn=response.urn, type=request.type, name=request.name,
                custom=bool(request.custom), parent=request.parent or None,
                inputs=self.cloud_mocks.last_inputs.value,
                dependencies=sorted(set(request.dependencies)),
                protect=bool(request.protect), retain_on_delete=bool(request.retainOnDelete),
                id=response.id or None,
                delete_before_replace=bool(request.deleteBeforeReplace),
                ignore_changes=list(request.ignoreChanges),
                replace_on_changes=list(request.replaceOnChanges),
                aliases=_alias_urns(request, response.urn),
                replace_with=list(request.replace_with),
                deleted_with=request.deletedWith or None))
        return response


def _alias_urns(request: Any, urn: str) -> list[str]:
    """The URNs of a registration's aliases: given whole, or as specs (name, type, parent)
    relative to the resource itself."""
    urns = list(request.aliasURNs)
    prefix, _, name = urn.rpartition("::")
    head, _, qualified_type = prefix.rpartition("::")
    own_parent_type = qualified_type.rpartition("$")[0]
    for alias in request.aliases:
        if alias.urn:
            urns.append(alias.urn)
            continue
        spec = alias.spec
        if spec.parentUrn:
            parent_type = spec.parentUrn.rpartition("::")[0].rpartition("::")[2]
            parent_type = "" if parent_type == STACK_TYPE else parent_type
        else:
            parent_type = "" if spec.noParent else own_parent_type
        leaf_type = spec.type or request.type
        full_type = f"{parent_type}${leaf_type}" if parent_type else leaf_type
        urns.append(f"{head}::{full_type}::{spec.name or name}")
    return urns


class _CloudMocks(mocks.Mocks):
    """Answers from the fake cloud; keeps each registration's plain inputs (per thread: the
    monitor registers on a thread pool) so they are converted once."""

    def __init__(self, cloud: FakeCloud):
        self.cloud = cloud
        self.last_inputs = threading.local()

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        self.last_inputs.value = _plain(args.inputs)
        if not args.custom and not args.resource_id:  # a component (a read has an id)
            return None, {}
        return self.cloud.resource_state(args.typ, args.name, self.last_inputs.value)

    def call(self, args: mocks.MockCallArgs,
             ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return self.cloud.answer(args.token, args.args), []


def run_plan(stack_path: Path, program: Callable[[], None] = run_program,
             environment: Mapping[str, Any] | None = None) -> Plan:
    """Validate and judge the stack file (with the resolved config of the ESC environments it
    imports, `environment`: schema.environments), then run `program` (default: the packaged
    Pulumi program, gpu_infra.program.run, the one the project's `__main__.py` runs) under
    the mock engine; the program takes that judgement rather than making it again.

    Raises ConfigError (bad stack file), ValidatorErrors, or ProgramError.
    """
    stack_file, cluster = load_cluster_config(stack_path, environment)
    references = image_stack_problems(cluster, Path(stack_path).parent)
    if references:
        raise ConfigError(str(stack_path), references)
    findings = judge_stack(cluster)
    if errors_in(findings):
        raise ValidatorErrors(errors_in(findings))
    raw = {key: stack_file.config[key] for key in (CLUSTER_KEY, REGION_KEY)
           if stack_file.config.get(key) is not None}
    with judged_already(raw, cluster, findings):
        resources, outputs = run_under_mocks(
            cluster, stack_file.name, program, config=stack_file.config,
            secret_keys=stack_file.secret_keys, stacks_dir=Path(stack_path).parent)
    return Plan(PROJECT, stack_file.name, cluster, resources, outputs,
                stack_file.secret_keys, findings, str(stack_path))


@contextmanager
def _without_source_positions() -> Iterator[None]:
    """The SDK records, for every registration, the Python stack that made it (for the
    engine's diagnostics): traceback.extract_stack, a file URI per frame. The mock monitor
    drops it, and it grows with the depth of the components and of the caller (a third of a
    plan under pytest), so within this block every registration gets an empty stack."""
    capture = sdk_resource._get_stack_trace
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = capture


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Types whose values are never an Unknown and hold nothing."""


def _contains_unknowns(val: Any) -> bool:
    """pulumi.runtime.rpc.contains_unknowns (an Unknown anywhere in `val`, through dicts and
    lists) without the SDK's recursive closure: each SDK call leaves a reference cycle (the
    closure, its cell, its annotations), thousands per plan, that only the cyclic collector
    frees (a quarter of a plan's time). Most values asked about are plain scalars: answered
    at once."""
    if type(val) in _SCALARS:
        return False
    seen: set[int] = set()
    pending = [val]
    while pending:
        item = pending.pop()
        if known_types.is_unknown(item):
            return True
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):  # item[key], as the SDK's: an output type's
            pending.extend(item[key] for key in item)  # fields shadow dict's methods
        elif isinstance(item, list):
            pending.extend(item)
    return False


@contextmanager
def _unknowns_found_without_cycles() -> Iterator[None]:
    """Within the block the SDK (rpc, Output, invokes: each looks it up in rpc) finds unknowns
    with _contains_unknowns."""
    sdk_version = rpc.contains_unknowns
    rpc.contains_unknowns = _contains_unknowns
    try:
        yield
    finally:
        rpc.contains_unknowns = sdk_version


def _memoized(unwrap: Callable[[type], type]) -> Callable[[type], type]:
    """`unwrap` (a pure function of a type annotation) remembered per annotation object. By
    identity, not equality: typing's unions are equal in any order of their members, and
    the SDK's answer depends on the order."""
    seen: dict[int, tuple[type, type]] = {}  # id -> (the annotation, kept alive; its answer)

    def remembered(annotation: type) -> type:
        found = seen.get(id(annotation))
        if found is None:
            found = seen[id(annotation)] = (annotation, unwrap(annotation))
        return found[1]
    return remembered


@contextmanager
def _annotations_unwrapped_once() -> Iterator[None]:
    """The SDK unwraps a property's annotation (Optional[T], Input[T], Output[T] -> T) each
    time it serializes or resolves a value of it: tens of thousands of times per plan, for a
    few hundred distinct annotations (a tenth of a 1024-node plan). Within the block each
    annotation is unwrapped once (by the SDK's functions, remembered until the block ends)."""
    unwrap, unwrap_optional = sdk_types.unwrap_type, sdk_types.unwrap_optional_type
    sdk_types.unwrap_type = _memoized(unwrap)  # type: ignore[assignment]  # same signature
    sdk_types.unwrap_optional_type = _memoized(unwrap_optional)  # type: ignore[assignment]
    try:
        yield
    finally:
        sdk_types.unwrap_type, sdk_types.unwrap_optional_type = unwrap, unwrap_optional


def run_under_mocks(cluster: ClusterConfig, stack_name: str, build: Callable[[], Any],
                    config: dict[str, Any] | None = None,
                    secret_keys: list[str] | None = None, stacks_dir: Path | None = None
                    ) -> tuple[list[PlannedResource], dict[str, Any]]:
    """Run `build` (a program, or a test constructing one component) under the mock engine,
    with the Pulumi config `config` and invokes answered from `cluster`; stack references
    read the stack files in `stacks_dir`.

    Returns the resources registered, in order, and the resolved stack exports.
    Raises ProgramError if `build` or anything it started fails.
    """
    monitor = _RecordingMonitor(FakeCloud(cluster, stacks_dir))
    ROOT.set(None)  # no root stack: set_mocks creates a fresh one
    # outputs a failed program left pending would fail this one (set_mocks keeps them)
    SETTINGS.outputs.clear()
    mocks.set_mocks(monitor.mocks, project=PROJECT, stack=stack_name, preview=False,
                    monitor=monitor)
    secret_roots = sorted({key.split(".")[0].split("[")[0] for key in secret_keys or []})
    pulumi.runtime.set_all_config(
        {key: value if isinstance(value, str) else json.dumps(value)
         for key, value in (config or {}).items()}, secret_keys=secret_roots)
    outputs: dict[str, Any] = {}

    async def resolve_exports() -> None:
        root = pulumi.runtime.get_root_resource()
        assert isinstance(root, Stack), "set_mocks creates the root stack"
        for key, value in root.outputs.items():
            outputs[key] = _plain(await pulumi.Output.from_input(value).future())

    def build_then_resolve() -> Awaitable[None]:
        build()
        return resolve_exports()

    # A plan is a short batch whose objects live until it ends: the cyclic collector's
    # repeated full scans of the SDK's objects took two thirds of a 1024-node plan (11.4 s
    # -> 4.2 s without them; peak memory 529 -> 539 MiB), so it pauses while the program runs.
    collecting = gc.isenabled()
    gc.disable()
    # registrations run on the loop's default executor, whose threads get event loops that
    # close_worker_loops closes: this run's threads end with it, so no later run (ours or
    # the SDK's own mocks) gets a thread holding a closed loop
    loop = _ensure_event_loop()
    executor = ThreadPoolExecutor()
    loop.set_default_executor(executor)
    try:
        with (_without_source_positions(), _unknowns_found_without_cycles(),
              _annotations_unwrapped_once()):
            _sync_await(run_pulumi_func(build_then_resolve))
    except Exception as error:  # noqa: BLE001 (any failure of the user's program)
        raise ProgramError(_describe_failure(error)) from None
    finally:
        executor.shutdown(wait=True)
        monitor.close_worker_loops()
        loop.set_default_executor(ThreadPoolExecutor())  # threads start when first used
        if collecting:
            gc.enable()
    return in_tree_order(monitor.recorded), outputs


def in_tree_order(resources: list[PlannedResource]) -> list[PlannedResource]:
    """Parents before children; siblings components first, then by type and name. The mock
    engine registers resources from a thread pool, so arrival order varies between runs."""
    known = {r.urn for r in resources}
    children: dict[str | None, list[PlannedResource]] = {}
    for resource in resources:
        children.setdefault(resource.parent if resource.parent in known else None,
                            []).append(resource)
    ordered: list[PlannedResource] = []

    def walk(parent: str | None) -> None:
        for child in sorted(children.get(parent, []), key=lambda r: (r.custom, r.type, r.name)):
            ordered.append(child)
            walk(child.urn)

    walk(None)
    return ordered


def _describe_failure(error: BaseException) -> str:
    """`in gpu-infra:network:Network 'x' (network.py:42): ValueError: ...`, naming the
    innermost component whose constructor was running, then the innermost line of our code
    (gpu_infra, or a program outside the installed libraries)."""
    component, where = None, None
    for frame, line in traceback.walk_tb(error.__traceback__):
        owner = frame.f_locals.get("self")
        if isinstance(owner, pulumi.ComponentResource):
            component = f"{owner._type} {owner._name!r}"
        if _is_our_code(frame.f_code.co_filename):
            where = f"{Path(frame.f_code.co_filename).name}:{line}"
    prefix = f"in {component}" if component else "in the program"
    location = f" ({where})" if where else ""
    return f"{prefix}{location}: {type(error).__name__}: {error}"


_PACKAGE_DIR = str(Path(__file__).resolve().parents[2]) + os.sep
_LIBRARY_DIRS = tuple(str(Path(sysconfig.get_paths()[key]).resolve()) + os.sep
                      for key in ("stdlib", "platstdlib", "purelib", "platlib"))


def _is_our_code(filename: str) -> bool:
    """True for gpu_infra's files (installed or not) and files outside the installed
    libraries and the standard library (a test's or a user's program)."""
    if filename.startswith("<"):  # <frozen runpy>, <string>
        return False
    path = str(Path(filename).resolve())
    return path.startswith(_PACKAGE_DIR) or not path.startswith(_LIBRARY_DIRS)


def _plain(value: Any) -> Any:
    """Inputs as plain JSON values: secrets become SECRET_PLACEHOLDER, unknowns `<unknown>`."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return SECRET_PLACEHOLDER
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value == rpc.UNKNOWN:
        return UNKNOWN_MARK
    return value


__all__ = ["Plan", "PlannedResource", "ProgramError", "ValidatorErrors", "run_plan",
           "run_under_mocks"]
