"""One output convention (issue 36.5): every command that prints a document takes `--output
FILE` (enumerated from the parser) and writes there exactly what it prints; `--format`
picks the document; the old flags still work for a release and say what replaces them;
`validate --format json` is machine-readable. And config from Pulumi ESC: a stack's
`environment:` read through `--environment-values`, or named when it cannot be seen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gpu_infra_tools.cli import main

from .conftest import PROJECT_DIR, STACKS_DIR
from .fake_cms import serving
from .shipped import plan_shipped_once
from .test_cli_every_command import COMMANDS, OFFLINE, names, sample

WITH_OUTPUT = [command for command, parser in COMMANDS.items()
               if any("--output" in action.option_strings for action in parser._actions)]


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _output_case(command: str) -> pytest.param:
    marks = [pytest.mark.slow] if command == "pr-comment" else []  # asks git
    return pytest.param(command, id=command, marks=marks)


def test_every_command_printing_a_document_has_output():
    assert set(WITH_OUTPUT) >= {"validate", "plan", "schema", "job", "policy", "completion",
                                "pr-comment", "preflight"}


@pytest.mark.parametrize("command", [_output_case(command) for command in WITH_OUTPUT])
def test_output_file_holds_what_stdout_gets(command: str, tmp_path: Path, capsys,
                                            monkeypatch):
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)
    with serving() as cloud:
        argv = [arg.replace("{d}", str(tmp_path)).replace("{endpoint}", cloud.url)
                for arg in sample(command)]
        if "--output" in argv:  # the sample names its own output (pr-comment)
            del argv[argv.index("--output"):argv.index("--output") + 2]
        code, printed, _ = _run([*argv, "--output", "-"], capsys)
        target = tmp_path / "written"
        again, rest, _ = _run([*argv, "--output", str(target)], capsys)
    assert code == again
    if code == 2:  # a command that needs the cloud, run without: nothing may be written
        assert not target.exists() and command not in OFFLINE
        return
    assert printed and target.read_text() == printed
    assert rest == ""


def test_plan_formats_and_the_deprecated_json_file(tmp_path: Path, capsys, monkeypatch):
    """`--json FILE` still writes the record beside the text report, and says it goes;
    `--format json` prints the same record."""
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)
    code, out, err = _run(["plan", "training-dev", "--json", str(tmp_path / "old.json")],
                          capsys)
    assert code == 0 and out.startswith("Previewing update (training-dev)")
    assert "--json is deprecated and goes in the next release; use --format json --output " \
           "FILE" in err
    code, record, err = _run(["plan", "training-dev", "--format", "json"], capsys)
    assert code == 0 and err == ""
    new, old = json.loads(record), json.loads((tmp_path / "old.json").read_text())
    for made in (new, old):  # when each was made, to the second: a second apart under load
        assert made["cost"].pop("timeGenerated")
    assert new == old
    code, sarif, _ = _run(["plan", "training-dev", "--format", "sarif"], capsys)
    assert json.loads(sarif)["version"] == "2.1.0"


def test_validate_json_verdicts(tmp_path: Path, capsys):
    code, out, _ = _run(["validate", "training-prod", "--format", "json"], capsys)
    verdict = json.loads(out)
    assert code == 0 and verdict["valid"] is True
    assert (verdict["stack"], verdict["layout"]) == ("training-prod", "training")
    assert verdict["problems"] == []
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text((STACKS_DIR / "Pulumi.training-dev.yaml").read_text().replace(
        "nodes: 1", "nodes: -3"))
    code, out, err = _run(["validate", str(bad), "--format", "json"], capsys)
    verdict = json.loads(out)
    assert code == 2 and verdict["valid"] is False
    assert any("fleet.nodes" in problem for problem in verdict["problems"])
    assert "fleet.nodes" in err  # the one-line problems still go to stderr


ORG_ENV = "ml-platform/gpu/dev"
WEBHOOK = "https://oapi.dingtalk.com/robot/send?access_token=0123456789abcdef0123456789"


def _stack_importing_config(tmp_path: Path) -> Path:
    """training-dev with its region and monitoring contacts moved into an ESC environment."""
    document = yaml.safe_load((STACKS_DIR / "Pulumi.training-dev.yaml").read_text())
    document["environment"] = [ORG_ENV]
    del document["config"]["alicloud:region"]
    path = tmp_path / "Pulumi.esc.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _values(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "esc-open.json"
    path.write_text(json.dumps({"environmentVariables": {"X": "1"}, "pulumiConfig": config}))
    return path


def test_an_environment_the_command_cannot_see_is_named(tmp_path: Path, capsys):
    stack = _stack_importing_config(tmp_path)
    code, _, err = _run(["validate", str(stack)], capsys)
    assert code == 2 and "alicloud:region: missing" in err
    assert (f"environment: the stack imports {ORG_ENV}; their config is not visible offline: "
            f"pass --environment-values FILE with the JSON of `esc env open {ORG_ENV}`") in err


def test_environment_values_fill_the_config_the_stack_file_lacks(tmp_path: Path, capsys):
    stack = _stack_importing_config(tmp_path)
    values = _values(tmp_path, {"alicloud:region": "cn-hangzhou",
                                "cluster": {"name": "ignored-the-stack-wins"}})
    code, out, err = _run(["validate", str(stack), "--environment-values", str(values),
                           "--format", "json"], capsys)
    verdict = json.loads(out)
    assert code == 0 and verdict["valid"] and verdict["region"] == "cn-hangzhou"
    assert verdict["cluster"] == "llm-train"  # the stack file's own cluster, not the env's
    assert "not visible offline" not in err


def test_a_secret_from_the_environment_never_reaches_the_plan(tmp_path: Path, capsys,
                                                              monkeypatch):
    """`esc env open` reveals secrets: a webhook (a field that may be secret) becomes a
    secret of the plan, a provider credential is not used."""
    stack = _stack_importing_config(tmp_path)
    document = yaml.safe_load(stack.read_text())
    del document["config"]["gpu-infra:cluster"]["monitoring"]
    stack.write_text(yaml.safe_dump(document))
    values = _values(tmp_path, {
        "alicloud:region": "cn-hangzhou", "alicloud:accessKey": "LTAI5tQ8plainKeyFromEsc",
        "alicloud:secretKey": "plain-secret-from-esc",
        "gpu-infra:cluster": {"monitoring": {"contacts": [
            {"name": "oncall", "dingtalk_webhook": WEBHOOK}]}}})
    code, out, err = _run(["plan", str(stack), "--environment-values", str(values),
                           "--format", "json"], capsys)
    assert code in (0, 1), err
    assert WEBHOOK not in out and "plain-secret-from-esc" not in out
    assert "LTAI5tQ8plainKeyFromEsc" not in out + err


def test_stack_wins_over_environment_only_per_key(tmp_path: Path, capsys):
    """The stack's `gpu-infra:cluster` replaces the environment's whole (a key-level
    merge, as Pulumi's): a cluster only in the environment is read from it."""
    document = yaml.safe_load((STACKS_DIR / "Pulumi.training-dev.yaml").read_text())
    cluster = document["config"].pop("gpu-infra:cluster")
    document["environment"] = [{ORG_ENV: {"merge": True}}]
    stack = tmp_path / "Pulumi.thin.yaml"
    stack.write_text(yaml.safe_dump(document))
    values = _values(tmp_path, {"cluster": cluster})
    code, out, err = _run(["validate", str(stack), "--environment-values", str(values)],
                          capsys)
    assert code == 0, err
    assert "valid training cluster 'llm-train'" in out


@pytest.mark.parametrize("content, expect", [
    ("[1, 2]", "must hold a JSON object, the output of `esc env open <environment>`"),
    ('{"pulumiConfig": [1]}', "pulumiConfig: must be an object of config keys"),
    ('{"pulumiConfig": {"a": NaN}}', "NaN is not a JSON number"),
    ("not json", "invalid JSON"),
    ("[" * 100_000, "invalid JSON"),
])
def test_bad_environment_values_are_one_line(content: str, expect: str, tmp_path: Path,
                                             capsys):
    values = tmp_path / "values.json"
    values.write_text(content)
    code, _, err = _run(["validate", "training-dev", "--environment-values", str(values)],
                        capsys)
    assert code == 2 and expect in err and "Traceback" not in err


@pytest.mark.parametrize("environment", ["3", "{imports: 3}", "[[a]]"])
def test_a_malformed_environment_key_is_one_line(environment: str, tmp_path: Path, capsys):
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(f"environment: {environment}\n"
                     + (STACKS_DIR / "Pulumi.training-dev.yaml").read_text())
    code, _, err = _run(["validate", str(stack)], capsys)
    assert code == 2 and "environment" in err and "Traceback" not in err


def test_output_option_names_are_the_convention():
    for command in WITH_OUTPUT:
        assert names(command, "--output")[0] == "--output"


def test_cost_formats_and_the_deprecated_json_flag(capsys, monkeypatch):
    """`cost --json` prints what `--format json` prints and says it goes; `--format
    markdown` is a table, with a base the difference per resource and the totals."""
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)
    code, old, err = _run(["cost", "training-dev", "--json"], capsys)
    assert code == 0 and "--json is deprecated and goes in the next release; use --format " \
                         "json" in err
    code, new, err = _run(["cost", "training-dev", "--format", "json"], capsys)
    assert code == 0 and err == "" and json.loads(new) == json.loads(old)
    assert json.loads(new)["projects"][0]["name"] == "training-dev"
    code, table, _ = _run(["cost", "training-dev", "--format", "markdown"], capsys)
    assert code == 0 and table.startswith("**Estimated cost: ")
    assert "| Component | Monthly (CNY) |" in table and "| **Total** |" in table
    code, text, _ = _run(["cost", "training-dev", "--compare", "training-prod"], capsys)
    code, diff, _ = _run(["cost", "training-dev", "--compare", "training-prod", "--format",
                          "markdown"], capsys)
    assert code == 0 and diff.startswith("**Cost difference `training-prod` -> `training-dev`")
    rows = [line for line in diff.splitlines() if line.startswith("| changed |")
            or line.startswith("| added |") or line.startswith("| removed |")]
    changed = [line for line in text.splitlines()[1:] if line.startswith("  ")]
    assert rows and len(rows) == len(changed)  # one row per resource the text lists
    difference = text.splitlines()[-1].split(": ")[1].split(" ")[0]
    assert diff.splitlines()[-1].endswith(f"| **{difference}** |")


def test_catalog_formats_hold_the_same_types(capsys):
    code, text, _ = _run(["catalog", "--gpu-model", "A10"], capsys)
    types = [line.split()[0] for line in text.splitlines()[1:] if line.startswith("ecs.")]
    code, records, _ = _run(["catalog", "--gpu-model", "A10", "--format", "json"], capsys)
    assert code == 0 and [record["type"] for record in json.loads(records)] == types
    assert all("A10" in record["gpu_model"].split() and record["live_price"] is None
               for record in json.loads(records))
    code, table, _ = _run(["catalog", "--gpu-model", "A10", "--format", "markdown"], capsys)
    assert code == 0 and table.startswith("| TYPE | GPU |")
    assert [line.split(" | ")[0].removeprefix("| ") for line in table.splitlines()
            if line.startswith("| ecs.")] == types
    recommend = ["catalog", "--recommend", "--gpu-memory", "80", "--gpus", "16",
                 "--multi-node", "--top", "3"]
    code, ranked, _ = _run([*recommend, "--format", "json"], capsys)
    choices = json.loads(ranked)
    assert code == 0 and [choice["rank"] for choice in choices] == [1, 2, 3]
    code, lines, _ = _run(recommend, capsys)
    assert [line.split()[1] for line in lines.splitlines() if line[0].isdigit()] == [
        choice["type"] for choice in choices]
