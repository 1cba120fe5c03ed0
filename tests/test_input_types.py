"""Every input of every planned resource has a type the SDK declares for it: the recorded
plans of the shipped stacks are checked against the type hints of the pulumi-alicloud Args
classes (str, int, float, bool, lists, maps and nested Args), so an id passed as a string
where the provider takes an int (ess.Alarm.cloud_monitor_group_id) fails here."""

from __future__ import annotations

import collections.abc
import importlib
import inspect
import keyword
import re
import typing
from functools import cache
from typing import Any, ForwardRef

import pytest

from .conftest import provider_class
from .golden import GOLDEN_DIR, golden_record

GOLDEN = sorted(GOLDEN_DIR.glob("*.json"))


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@cache
def parameters(args_class: type) -> dict[str, Any]:
    """Python argument name -> annotation of an Args class."""
    signature = inspect.signature(args_class.__init__)
    return {name: p.annotation for name, p in signature.parameters.items() if name != "__self__"}


def _nested(reference: ForwardRef, module: str) -> type | None:
    name = reference.__forward_arg__
    if not name.endswith("Args"):
        return None
    return getattr(importlib.import_module(f"pulumi_alicloud.{module}._inputs"), name, None)


def problems(annotation: Any, value: Any, module: str, path: str) -> list[str]:
    """Why `value` does not fit `annotation` (empty when it fits)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        options = [problems(option, value, module, path) for option in typing.get_args(annotation)
                   if typing.get_origin(option) is not collections.abc.Awaitable
                   and not (isinstance(option, ForwardRef)
                            and option.__forward_arg__ == "Output[T]")]
        return [] if any(not found for found in options) else min(options, key=len)
    if annotation is type(None):
        return [] if value is None else [f"{path}: {value!r} is not null"]
    if annotation is typing.Any:
        return []
    if isinstance(annotation, ForwardRef):
        nested = _nested(annotation, module)
        if nested is None:
            return [f"{path}: cannot resolve {annotation.__forward_arg__}"]
        return args_problems(nested, value, module, path)
    if annotation is bool:
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a bool"]
    if annotation is int:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
            and float(value).is_integer()
        return [] if ok else [f"{path}: {value!r} is not an int"]
    if annotation is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not a number"]
    if annotation is str:
        return [] if isinstance(value, str) else [f"{path}: {value!r} is not a string"]
    if origin is collections.abc.Sequence:
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        [item] = typing.get_args(annotation)
        return [p for i, v in enumerate(value) for p in problems(item, v, module,
                                                                 f"{path}[{i}]")]
    if origin is collections.abc.Mapping:
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a map"]
        _, item = typing.get_args(annotation)
        return [p for k, v in value.items() for p in problems(item, v, module, f"{path}.{k}")]
    if inspect.isclass(annotation) and annotation.__name__.endswith("Args"):
        return args_problems(annotation, value, module, path)
    return [f"{path}: unchecked annotation {annotation!r}"]


def args_problems(args_class: type, value: Any, module: str, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: {value!r} is not an object ({args_class.__name__})"]
    declared = parameters(args_class)
    found: list[str] = []
    for key, item in value.items():
        name = snake(key)
        if keyword.iskeyword(name):
            name += "_"  # the SDK's Python name of a property named by a keyword (`not`)
        if name not in declared:
            found.append(f"{path}.{key}: not an argument of {args_class.__name__}")
        else:
            found += problems(declared[name], item, module, f"{path}.{key}")
    return found


def resources() -> list[tuple[str, dict[str, Any]]]:
    """Every pulumi-alicloud resource of the recordings (Kubernetes objects are checked
    against the Kubernetes OpenAPI schema instead: tests/test_ack_kubernetes.py)."""
    return [(f"{path.stem}:{r['name']}", r) for path in GOLDEN
            for r in golden_record(path.stem)["resources"]
            if r["custom"] and r["type"].startswith("alicloud:")]


@pytest.mark.parametrize("label, resource", resources(), ids=lambda v: v if isinstance(v, str)
                         else "")
def test_inputs_have_the_sdk_declared_types(label, resource):
    cls = provider_class(resource["type"])
    module_of = importlib.import_module(cls.__module__)
    args_class = getattr(module_of, f"{cls.__name__}Args", None) or getattr(
        module_of, f"{cls.__name__}InitArgs")  # the SDK's name when ...Args is an input type
    module = resource["type"].split(":")[1].split("/")[0]
    assert args_problems(args_class, resource["inputs"], module, label) == []


def test_the_checker_catches_a_string_where_the_sdk_takes_an_int():
    from pulumi_alicloud.ess import AlarmArgs
    assert args_problems(AlarmArgs, {"cloudMonitorGroupId": "123"}, "ess", "alarm") == [
        "alarm.cloudMonitorGroupId: '123' is not an int"]
    assert args_problems(AlarmArgs, {"cloudMonitorGroupId": 123.0}, "ess", "alarm") == []


def test_the_checker_looks_into_nested_args_and_unknown_keys():
    from pulumi_alicloud.ess import ScalingRuleArgs
    assert args_problems(ScalingRuleArgs, {"stepAdjustments": [{"scalingAdjustment": "2"}],
                                           "bogus": 1}, "ess", "rule") == [
        "rule.stepAdjustments[0].scalingAdjustment: '2' is not an int",
        "rule.bogus: not an argument of ScalingRuleArgs"]
