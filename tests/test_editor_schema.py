"""The editor schema (schema/gpu-infra-stack.schema.json): up to date, valid JSON Schema, and
agreeing with `gpu-infra validate` under a plain JSON Schema validator."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import Field
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

from gpu_infra.schema import ConfigError, load_cluster_config
from gpu_infra.schema.base import StrictModel, field_descriptions
from gpu_infra.schema.editor import editor_schema, models_reached, secure_fields
from gpu_infra.schema.registry import LAYOUT_MODELS

from .conftest import PROJECT_DIR, STACKS_DIR

COMMITTED = PROJECT_DIR / "schema" / "gpu-infra-stack.schema.json"
SCHEMA = editor_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SHIPPED = sorted(STACKS_DIR.glob("Pulumi.*.yaml"))
SECURE = {"secure": "v1:8J2kQm0c:AAABAJ5x"}


def errors_of(document: dict) -> list[jsonschema.ValidationError]:
    return list(VALIDATOR.iter_errors(document))


def stack_document(name: str) -> dict:
    return yaml.safe_load((STACKS_DIR / f"Pulumi.{name}.yaml").read_text())


def validates(document: dict, tmp_path: Path) -> bool:
    """What `gpu-infra validate` says of `document` (schema part)."""
    path = tmp_path / "Pulumi.probe.yaml"
    path.write_text(yaml.safe_dump(document))
    try:
        load_cluster_config(path)
    except ConfigError:
        return False
    return True


def test_committed_schema_is_up_to_date():
    assert json.loads(COMMITTED.read_text()) == SCHEMA, (
        "schema/gpu-infra-stack.schema.json is stale: rerun "
        "`.venv/bin/gpu-infra schema > schema/gpu-infra-stack.schema.json`")


def test_schema_is_valid_draft_2020_12_without_openapi_discriminator():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert "discriminator" not in json.dumps(SCHEMA)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_stack_validates(path: Path):
    assert [e.message for e in errors_of(yaml.safe_load(path.read_text()))] == []


@pytest.mark.parametrize(("stack", "layout"), [("training-dev", "training"),
                                               ("inference-prod", "inference"),
                                               ("rendering-batch", "rendering")])
def test_a_typo_inside_a_layout_is_reported_there_only(stack, layout):
    document = stack_document(stack)
    document["config"]["gpu-infra:cluster"]["fleet"]["nodez"] = 3
    errors = errors_of(document)
    assert [(list(e.absolute_path), e.validator) for e in errors] == [
        (["config", "gpu-infra:cluster", "fleet"], "additionalProperties")]
    assert "'nodez' was unexpected" in errors[0].message
    schema_path = list(errors[0].absolute_schema_path)
    branch = schema_path[schema_path.index("allOf") + 1]
    cluster = SCHEMA["properties"]["config"]["properties"]["gpu-infra:cluster"]
    assert cluster["allOf"][branch]["if"]["properties"]["layout"]["const"] == layout


def test_unknown_or_missing_layout():
    document = stack_document("training-dev")
    document["config"]["gpu-infra:cluster"]["layout"] = "batch"
    errors = errors_of(document)
    assert [(list(e.absolute_path), e.validator) for e in errors] == [
        (["config", "gpu-infra:cluster", "layout"], "enum")]
    del document["config"]["gpu-infra:cluster"]["layout"]
    assert [e.message for e in errors_of(document)] == ["'layout' is a required property"]


def test_secure_values_where_a_secret_may_go(tmp_path: Path):
    assert secure_fields(SCHEMA) == ["Contact.dingtalk_webhook", "MonitoringConfig.webhook"]
    document = stack_document("training-prod")
    monitoring = document["config"]["gpu-infra:cluster"]["monitoring"]
    monitoring["webhook"] = SECURE
    monitoring["contacts"][0]["dingtalk_webhook"] = copy.deepcopy(SECURE)
    assert errors_of(document) == [] and validates(document, tmp_path)


def test_secure_value_where_no_secret_goes_is_rejected_by_both(tmp_path: Path):
    document = stack_document("training-prod")
    document["config"]["gpu-infra:cluster"]["name"] = SECURE
    errors = errors_of(document)
    assert [list(e.absolute_path) for e in errors] == [["config", "gpu-infra:cluster", "name"]]
    assert not validates(document, tmp_path)
    document = stack_document("training-prod")
    document["config"]["gpu-infra:cluster"]["monitoring"]["webhook"] = {"secure": 1}
    assert errors_of(document)


ONLY_VALIDATE = {
    # cross-field rules: one field judged against another
    "steps-inverted", "steps-overlapping", "steps-gap", "steps-two-unbounded",
    "steps-closed-above", "steps-start-above-threshold", "steps-remove-instances",
    "scale-in-above-scale-out", "schedule-ends-before-start", "schedule-min-above-max",
    "vpc-slash-8-without-vswitch-prefix",
    # arithmetic JSON Schema has no words for
    "cpu-target-500", "schedule-impossible-date", "schedule-past", "schedule-beyond-90-days",
    "vpc-loopback", "vpc-multicast", "vpc-link-local", "vpc-shared-100-64",
    "vpc-this-network", "vpc-reserved-240",
    # YAML 1.2 values the editor's YAML reads differently
    "nan-threshold", "infinite-spot-limit",
    # JSON Schema counts 2.0 as an integer
    "float-integer",
    # a bound of the wire format, not of any one field (loader.inexact_integers)
    "lifecycle-days-beyond-exact", "group-id-beyond-exact",
}
"""The hostile mutations of tests/test_hostile_schema.py that only `validate` refuses, and
why; every other one the editor schema refuses as well."""


def test_the_hostile_mutations_the_editor_schema_catches_too():
    from .test_hostile_schema import NONSENSE, stack_text

    caught_by_schema: list[str] = []
    for name, (kind, stack, _) in NONSENSE.items():
        if kind == "plan-only":  # validate accepts these; the plan refuses them
            continue
        document = yaml.safe_load(stack if isinstance(stack, str) else stack_text(stack))
        if errors_of(document):
            caught_by_schema.append(name)
    judged = {name for name, (kind, _, _) in NONSENSE.items() if kind != "plan-only"}
    assert judged - set(caught_by_schema) == ONLY_VALIDATE
    assert len(caught_by_schema) >= 14, caught_by_schema


@pytest.mark.parametrize("key", ["gpu-infra:clustr", "gpu-infra:fleet", "nodes"])
def test_an_unknown_config_key_is_refused_by_both(key, tmp_path: Path):
    document = stack_document("training-dev")
    document["config"][key] = 1
    assert errors_of(document) and (key == "nodes" or not validates(document, tmp_path))


@pytest.mark.parametrize("cidr", ["10.0.0.300/16", "10.0.0.0/33", "10.0.0/16", "ten/8"])
def test_a_malformed_cidr_is_refused_by_both(cidr, tmp_path: Path):
    document = stack_document("training-dev")
    document["config"]["gpu-infra:cluster"]["network"]["vpc_cidr"] = cidr
    document["config"]["gpu-infra:cluster"].setdefault("security", {})["admin_cidrs"] = [cidr]
    paths = {tuple(e.absolute_path)[-2:] for e in errors_of(document)}
    assert ("network", "vpc_cidr") in paths and ("admin_cidrs", 0) in paths
    assert not validates(document, tmp_path)


class _Documented(StrictModel):
    plain: int = 1
    """First line.

        Indented continuation."""
    explained: int = Field(1, description="Given explicitly.")
    """Not this one: the explicit description wins."""
    undocumented: int = 1
    after_a_method: int = 1


class _Redeclared(_Documented):
    plain: int = 2
    inherited_doc: str = "x"
    """Only here."""


def test_field_descriptions_are_the_docstrings_under_the_fields_of_their_declaring_class():
    assert field_descriptions(_Documented) == {
        "plain": "First line.\n\nIndented continuation.", "explained": "Given explicitly."}
    # `plain` is declared again without a docstring: as pydantic reads it, undocumented
    assert field_descriptions(_Redeclared) == {
        "explained": "Given explicitly.", "inherited_doc": "Only here."}


def test_the_descriptions_are_those_pydantic_would_read_from_the_docstrings():
    """Pydantic's own attribute-docstring reader (what use_attribute_docstrings runs as each
    class is made) is the oracle, for every model a stack file reaches."""
    models = models_reached(LAYOUT_MODELS.values())
    assert len(models) > 40
    for model in models.values():
        own = extract_docstrings_from_cls(model, use_inspect=True)
        ours = field_descriptions(model)
        for name in model.model_fields:
            if name in own and not model.model_fields[name].description:
                assert ours.get(name) == own[name], f"{model.__name__}.{name}"
        assert set(own) & set(model.model_fields) <= set(ours), model.__name__
