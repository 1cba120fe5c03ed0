"""The component provider (provider/, gpu_infra_provider): its generated argument classes
and schema are current, the running plugin answers GetSchema over gRPC with that schema,
the schema's inputs are the Python models' fields, every shipped fleet stack is a valid set
of inputs, the YAML and TypeScript examples check against it, and the components build
their layouts and blocks under the mock engine."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from functools import cache
from typing import Any

import grpc
import jsonschema
import pytest
import yaml
from pulumi.provider.experimental.util import camel_case
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pydantic import BaseModel

from gpu_infra.schema import SECRET_PLACEHOLDER
from gpu_infra_provider import codegen, typescript
from gpu_infra_provider.components import COMPONENTS, token
from gpu_infra_provider.schema import schema_text
from gpu_infra_tools.plan.engine import run_under_mocks

from .conftest import BASE_INFERENCE, BASE_TRAINING, PROJECT_DIR, STACKS_DIR, cluster_config

PROVIDER_DIR = PROJECT_DIR / "provider"
SCHEMA = json.loads((PROVIDER_DIR / "schema.json").read_text())
TSC = PROJECT_DIR / "node_modules" / ".bin" / "tsc"
LAYOUT_COMPONENTS = {"training": "TrainingCluster", "inference": "InferenceService",
                     "rendering": "RenderFarm", "image": "ImageBakery"}


def test_the_generated_argument_classes_are_current():
    assert codegen.ARGS_PATH.read_text() == codegen.render(), \
        "regenerate: python -m gpu_infra_provider.codegen"


@cache
def generated_schema_text() -> str:
    """schema_text(): the schema the component provider infers (about a second of CPU)."""
    return schema_text()


def test_the_checked_in_schema_is_current():
    assert (PROVIDER_DIR / "schema.json").read_text() == generated_schema_text(), \
        "regenerate: python -m gpu_infra_provider.schema > provider/schema.json"


def test_the_typescript_declarations_are_current():
    declarations = PROJECT_DIR / "examples" / "typescript" / "sdk" / "index.d.ts"
    assert declarations.read_text() == typescript.render(SCHEMA), \
        "regenerate: python -m gpu_infra_provider.typescript > examples/typescript/sdk/index.d.ts"


@pytest.mark.slow  # runs the plugin as a gRPC server process
def test_the_plugin_answers_get_schema_over_grpc():
    """The plugin as the CLI starts it (`python -u provider/__main__.py <engine>`): it prints
    its port, then serves the ResourceProvider protocol."""
    process = subprocess.Popen([sys.executable, "-u", str(PROVIDER_DIR / "__main__.py"),
                                "127.0.0.1:1"], stdout=subprocess.PIPE, cwd=PROVIDER_DIR)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            answer = stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=120)
    finally:
        process.terminate()
        process.wait(timeout=30)
    served = json.loads(answer.schema)
    assert served == SCHEMA
    assert sorted(served["resources"]) == sorted(token(c.__name__) for c in COMPONENTS)


def _model_of(type_token: str) -> type[BaseModel]:
    name = type_token.rsplit(":", 1)[-1]
    return next(model for model in _reached_models() if model.__name__ == name)


def _reached_models() -> list[type[BaseModel]]:
    writer = codegen._Writer()
    for model in codegen.ROOT_MODELS:
        writer.add(model)
    return list(writer.classes)


def test_type_names_are_the_models_names_without_an_args_suffix():
    """Pulumi's SDK generators append `Args` to input types themselves (pulumi-eks and
    awsx name theirs without it): `NetworkConfig` becomes `NetworkConfigArgs`, never
    `NetworkConfigArgsArgs`."""
    from gpu_infra.schema.registry import LAYOUT_MODELS

    names = {t.rsplit(":", 1)[-1] for t in SCHEMA["types"]}
    layout_args = {model.__name__ for model in LAYOUT_MODELS.values()}  # resources' inputs
    assert names == {model.__name__ for model in _reached_models()} - layout_args
    assert not [name for name in names if name.endswith("Args")]


@pytest.mark.parametrize("type_token", sorted(SCHEMA["types"]))
def test_every_input_type_has_its_models_fields(type_token):
    spec = SCHEMA["types"][type_token]
    model = _model_of(type_token)
    fields = {name: info for name, info in model.model_fields.items()
              if name not in codegen.OMITTED_FIELDS}
    assert set(spec["properties"]) == {camel_case(name) for name in fields}
    assert set(spec.get("required", [])) == {camel_case(name) for name, info in fields.items()
                                             if info.is_required()}


@pytest.mark.parametrize("layout", sorted(LAYOUT_COMPONENTS))
def test_layout_components_take_their_layouts_model(layout):
    from gpu_infra.schema.registry import LAYOUT_MODELS

    resource = SCHEMA["resources"][token(LAYOUT_COMPONENTS[layout])]
    fields = {name: info for name, info in LAYOUT_MODELS[layout].model_fields.items()
              if name not in codegen.OMITTED_FIELDS}
    assert set(resource["inputProperties"]) == {camel_case(name) for name in fields}
    assert set(resource["requiredInputs"]) == {camel_case(name) for name, info in fields.items()
                                               if info.is_required()}
    assert resource["isComponent"] is True and resource["properties"]["vpcId"]


def json_schema(prop: dict[str, Any], plain: bool = True) -> dict[str, Any]:
    """A JSON Schema of a Pulumi schema property; a value that may be an output may also
    be a YAML interpolation (`${...}`)."""
    if "$ref" in prop:
        ref = prop["$ref"]
        found: dict[str, Any] = {} if ref == "pulumi.json#/Any" else {
            "$ref": "#/$defs/" + ref.rsplit(":", 1)[-1]}
    elif prop.get("type") == "array":
        found = {"type": "array", "items": json_schema(prop["items"])}
    elif prop.get("type") == "object":
        found = {"type": "object",
                 "additionalProperties": json_schema(prop.get("additionalProperties", {}))}
    else:
        found = {"type": prop["type"]} if "type" in prop else {}
    if prop.get("plain") or not plain:
        return found
    return {"anyOf": [found, {"type": "string", "pattern": r"^\$\{.+\}$"}]}


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": required,
            "properties": {name: json_schema(prop) for name, prop in properties.items()}}


def inputs_schema(resource_token: str) -> dict[str, Any]:
    resource = SCHEMA["resources"][resource_token]
    schema = object_schema(resource["inputProperties"], resource.get("requiredInputs", []))
    schema["$defs"] = {name.rsplit(":", 1)[-1]: object_schema(spec["properties"],
                                                              spec.get("required", []))
                       for name, spec in SCHEMA["types"].items()}
    return schema


@cache
def inputs_validator(resource_token: str) -> Any:
    """A validator of the inputs of `resource_token`, its schema checked once (where
    jsonschema.validate checks the schema again on every call)."""
    schema = inputs_schema(resource_token)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def to_wire(value: Any, prop: dict[str, Any]) -> Any:
    """A stack file's value with the schema's property names (camelCase, map keys kept)."""
    if isinstance(value, dict) and set(value) == {"secure"}:
        return SECRET_PLACEHOLDER
    ref = prop.get("$ref", "")
    if ref.startswith("#/types/") and isinstance(value, dict):
        spec = SCHEMA["types"][ref.removeprefix("#/types/")]["properties"]
        return {camel_case(k): to_wire(v, spec.get(camel_case(k), {})) for k, v in value.items()}
    if prop.get("type") == "array" and isinstance(value, list):
        return [to_wire(item, prop["items"]) for item in value]
    if prop.get("type") == "object" and isinstance(value, dict):
        return {k: to_wire(v, prop.get("additionalProperties", {})) for k, v in value.items()}
    return value


SHIPPED_LAYOUT_STACKS = sorted(
    path for path in STACKS_DIR.glob("Pulumi.*.yaml")
    if yaml.safe_load(path.read_text())["config"]["gpu-infra:cluster"]["layout"]
    in LAYOUT_COMPONENTS)


@pytest.mark.parametrize("path", SHIPPED_LAYOUT_STACKS, ids=lambda p: p.stem)
def test_every_shipped_stack_is_valid_provider_input(path):
    config = yaml.safe_load(path.read_text())["config"]
    cluster = dict(config["gpu-infra:cluster"])
    resource_token = token(LAYOUT_COMPONENTS[cluster.pop("layout")])
    properties = SCHEMA["resources"][resource_token]["inputProperties"]
    args = {camel_case(k): to_wire(v, properties.get(camel_case(k), {}))
            for k, v in {**cluster, "region": config["alicloud:region"]}.items()}
    inputs_validator(resource_token).validate(args)


@pytest.mark.parametrize("path", SHIPPED_LAYOUT_STACKS, ids=lambda p: p.stem)
def test_the_component_exposes_every_output_its_layout_exports(path):
    """Other languages get what a Python program gets: each export of the stack's layout
    is an output of its component (camelCased), the always-present ones required."""
    from gpu_infra_provider import components

    from .shipped import planned_once

    plan = planned_once(path)
    component = getattr(components, LAYOUT_COMPONENTS[plan.cluster.layout])
    resource = SCHEMA["resources"][token(component.__name__)]
    declared = components.declared_outputs(component)
    assert set(resource["properties"]) == {camel_case(name) for name in declared}
    assert set(plan.outputs) <= set(declared)
    assert set(resource.get("required", [])) <= {camel_case(name) for name in plan.outputs}


def test_a_misspelled_input_fails_the_schema():
    args = {"name": "x", "region": "cn-hangzhou", "network": {"zones": ["cn-hangzhou-i"]},
            "fleet": {"instanceTyp": "ecs.gn7i-c8g1.2xlarge"}}
    with pytest.raises(jsonschema.ValidationError, match="instanceTyp"):
        inputs_validator(token("TrainingCluster")).validate(args)


def test_the_yaml_example_uses_the_provider_and_valid_inputs():
    program = yaml.safe_load((PROJECT_DIR / "examples" / "yaml" / "Pulumi.yaml").read_text())
    assert program["runtime"] == "yaml"
    assert (PROJECT_DIR / "examples" / "yaml" / program["packages"]["gpu-infra"] /
            "PulumiPlugin.yaml").is_file()
    assert len(program["resources"]) >= 2
    for resource in program["resources"].values():
        assert resource["type"] in SCHEMA["resources"]
        inputs_validator(resource["type"]).validate(resource["properties"])
    outputs = {name for resource in SCHEMA["resources"].values()
               for name in resource["properties"]}
    for value in program["outputs"].values():
        assert value.removeprefix("${").removesuffix("}").split(".", 1)[1] in outputs


@pytest.mark.skipif(shutil.which("node") is None or not TSC.is_file(),
                    reason="tsc needs node and `npm ci` (make test runs it)")
@pytest.mark.slow  # a tsc process
def test_the_typescript_example_type_checks_and_a_typo_does_not(tmp_path):
    """One tsc run (its libraries read once) over the example as tests/js/tsconfig.examples.json
    checks it and over a copy with a typo: every error is the copy's, the typo among them."""
    source = (PROJECT_DIR / "examples" / "typescript" / "index.ts").read_text()
    broken = tmp_path / "broken.ts"
    broken.write_text(source.replace("instanceType:", "instanceTyp:"))
    config = tmp_path / "tsconfig.json"
    config.write_text(json.dumps({
        "extends": str(PROJECT_DIR / "tests" / "js" / "tsconfig.examples.json"),
        "files": [str(PROJECT_DIR / "tests" / "js" / "pulumi-stub.d.ts"),
                  str(PROJECT_DIR / "examples" / "typescript" / "index.ts"), str(broken)]}))
    done = subprocess.run([str(TSC), "-p", str(config), "--pretty", "false"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    errors = [line for line in done.stdout.splitlines() if ": error TS" in line]
    assert done.returncode != 0 and errors, done.stdout + done.stderr
    assert [line for line in errors if not line.startswith("broken.ts(")] == [], done.stdout
    assert "instanceTyp" in done.stdout


def test_the_typescript_example_is_an_npm_project_for_pulumis_codegen():
    """`pulumi package add ../../provider` adds the generated @pulumi/gpu-infra to its
    package.json; the program imports that package, strictly type-checked."""
    example = PROJECT_DIR / "examples" / "typescript"
    package = json.loads((example / "package.json").read_text())
    assert "@pulumi/pulumi" in package["dependencies"]
    assert package["scripts"]["check"] == "tsc --noEmit"
    assert json.loads((example / "tsconfig.json").read_text())["compilerOptions"]["strict"]
    assert 'from "@pulumi/gpu-infra"' in (example / "index.ts").read_text()
    assert yaml.safe_load((example / "Pulumi.yaml").read_text())["runtime"] == "nodejs"


def test_the_image_bakery_component_builds_the_image_layout():
    from gpu_infra_provider.components import ImageBakery

    cluster = {"name": "img", "layout": "image", "network": {"zones": ["cn-hangzhou-i"]},
               "image": {"instance_type": "ecs.gn7i-c8g1.2xlarge"}}
    resources, _ = _construct(ImageBakery, {**{k: v for k, v in cluster.items()
                                               if k != "layout"}, "region": "cn-hangzhou"},
                              cluster)
    types = [r.type for r in resources]
    assert types[0] == "gpu-infra:index:ImageBakery"
    assert "gpu-infra:layouts:ImageBakery" in types
    assert "alicloud:ecs/imagePipelineExecution:ImagePipelineExecution" in types


def _construct(component: type, args: dict[str, Any], cluster: dict[str, Any]):
    return run_under_mocks(cluster_config(cluster), "provider",
                           lambda: component("c1", args))


def test_the_training_component_builds_the_training_layout():
    from gpu_infra_provider.components import TrainingCluster

    settings = {k: v for k, v in BASE_TRAINING.items() if k != "layout"}
    resources, _ = _construct(TrainingCluster, {**settings, "region": "cn-hangzhou"},
                              BASE_TRAINING)
    types = [r.type for r in resources]
    assert types[0] == "gpu-infra:index:TrainingCluster"
    assert "gpu-infra:layouts:TrainingCluster" in types
    assert types.count("alicloud:ecs/instance:Instance") == BASE_TRAINING["fleet"]["nodes"]


def test_the_scaling_block_component_uses_the_callers_wiring():
    from gpu_infra_provider.components import GpuScalingGroup

    resources, _ = _construct(GpuScalingGroup, {
        "region": "cn-hangzhou", "fleet": {"instance_types": ["ecs.gn7i-c8g1.2xlarge"]},
        "vswitch_ids": ["vsw-a1", "vsw-b2"], "security_group_ids": ["sg-c3"],
        "image_id": "m-d4"}, BASE_INFERENCE)
    (group,) = [r for r in resources if r.type == "alicloud:ess/scalingGroup:ScalingGroup"]
    assert group.inputs["vswitchIds"] == ["vsw-a1", "vsw-b2"]


def test_bad_arguments_fail_with_one_line_per_problem():
    from gpu_infra_provider.components import TrainingCluster

    with pytest.raises(Exception, match=r"fleet\.nodes") as failure:
        _construct(TrainingCluster, {"name": "c1", "region": "cn-hangzhou",
                                     "network": {"zones": ["cn-hangzhou-i"]},
                                     "fleet": {"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                               "nodes": 0}}, BASE_TRAINING)
    assert "Traceback" not in str(failure.value)


def test_every_component_is_in_the_schema():
    assert set(SCHEMA["resources"]) == {token(c.__name__) for c in COMPONENTS}
    assert json.loads(generated_schema_text())["name"] == "gpu-infra"


def test_a_layouts_error_findings_fail_as_invalid_properties_with_schema_paths():
    from pulumi import InputPropertiesError

    from gpu_infra_provider.components import TrainingCluster

    settings = {k: v for k, v in BASE_TRAINING.items() if k != "layout"}
    args = {**settings, "region": "cn-hangzhou",
            "fleet": {"instance_type": "ecs.gn9x-c8g1.2xlarge", "nodes": 2}}
    raised: list[Exception] = []

    def program() -> None:
        try:
            TrainingCluster("c1", args)
        except Exception as error:  # noqa: BLE001 (the test looks at what it was)
            raised.append(error)

    run_under_mocks(cluster_config(BASE_TRAINING), "provider", program)
    (error,) = raised
    assert isinstance(error, InputPropertiesError)
    assert [item["property_path"] for item in error.errors or []] == ["fleet.instanceType"]
    assert (error.errors or [])[0]["reason"].startswith("unknown-instance-type: ")
