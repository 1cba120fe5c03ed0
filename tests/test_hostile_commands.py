"""Hostile command lines of issue 40 that are not about a stack file's content: a base that
is no commit, acknowledgement files that are binary, missing, a directory or a bomb, `-` as
an output, the image stack's clone. Each case: exit 2, one line naming the option or file,
no traceback, nothing written (tests/hostile.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from gpu_infra_tools.cli import main

from .conftest import PROJECT_DIR
from .hostile import TRAINING, Case, billion_laughs, run_in_process
from .shipped import plan_shipped_once
from .test_cli_every_command import COMMANDS, sample

BASE = {"base.json": json.dumps({"resources": []})}
AGAINST = ("plan", "training-dev", "--against", "{d}/base.json")
ACKNOWLEDGED = "acknowledged/own.yaml"
OWN_STACK = ("plan", "{d}/Pulumi.own.yaml", "--against", "{d}/base.json")
CASES = [
    Case("acknowledgements", "binary", (*AGAINST, "--acknowledgements", "{d}/ack.bin"),
         {**BASE, "ack.bin": bytes(range(256))},
         expect="{d}/ack.bin: byte 128 is not UTF-8 text; acknowledgement files are UTF-8"),
    Case("acknowledgements", "missing", (*AGAINST, "--acknowledgements", "{d}/nowhere.yaml"),
         BASE, expect="argument --acknowledgements: {d}/nowhere.yaml: cannot read: No such "
                      "file or directory"),
    Case("acknowledgements", "without-against",
         ("plan", "training-dev", "--acknowledgements", "{d}/ack.yaml"),
         {"ack.yaml": "acknowledge: []\n"},
         expect="--acknowledgements: applies to a change report; give --against BASE too"),
    Case("acknowledgements", "laughs", (*AGAINST, "--acknowledgements", "{d}/ack.yaml"),
         {**BASE, "ack.yaml": billion_laughs()},
         expect="values, counting what aliases expand to"),
    Case("acknowledgements", "not-a-list", (*AGAINST, "--acknowledgements", "{d}/ack.yaml"),
         {**BASE, "ack.yaml": "acknowledge: 3\n"},
         expect="acknowledge: Input should be a valid list"),
    Case("acknowledgements", "default-is-a-directory", OWN_STACK,
         {**BASE, "Pulumi.own.yaml": TRAINING, f"{ACKNOWLEDGED}/keep": ""},
         expect="{d}/acknowledged/own.yaml: not a regular file"),
    Case("acknowledgements", "default-is-binary", OWN_STACK,
         {**BASE, "Pulumi.own.yaml": TRAINING, ACKNOWLEDGED: b"\xff\xfe"},
         expect="{d}/acknowledged/own.yaml: byte 0 is not UTF-8 text"),
    Case("outputs", "json-and-sarif-both-stdout",
         ("plan", "training-dev", "--json", "-", "--sarif", "-"),
         expect="only one of them can go to standard output"),
    Case("pr-comment", "out-in-missing-directory",
         ("pr-comment", "--base", "HEAD", "--out", "{d}/nowhere/comment.md"),
         expect="argument --output/--out: {d}/nowhere/comment.md: the directory {d}/nowhere "
                "does not"),
    Case("pr-comment", "out-a-directory", ("pr-comment", "--base", "HEAD", "--out", "{d}"),
         expect="argument --output/--out: {d}: is a directory; give a file name"),
    Case("pr-comment", "sarif-dir-a-file",
         ("pr-comment", "--base", "HEAD", "--out", "{d}/c.md", "--sarif-dir", "{d}/f"),
         {"f": "x"}, expect="argument --sarif-dir: {d}/f: is a file, not a directory"),
]
ARGUMENT_CASES = [
    Case("arguments", "gpu-memory-nan", ("catalog", "--gpu-memory", "nan"),
         expect="--gpu-memory: nan; must be a finite number above 0"),
    Case("arguments", "gpu-memory-infinite", ("catalog", "--recommend", "--gpu-memory", "inf"),
         expect="--gpu-memory: inf; must be a finite number above 0"),
    Case("arguments", "gpu-model-empty", ("catalog", "--gpu-model", " "),
         expect="argument --gpu-model: empty; give a value"),
    Case("arguments", "against-empty", ("plan", "training-dev", "--against", ""),
         expect="argument --against: empty"),
    Case("arguments", "clone-name-empty",
         ("clone", "training-dev", "copy", "--stacks-dir", "{d}", "--name", ""),
         expect="argument --name: empty"),
    Case("arguments", "cost-endpoint-unused",
         ("cost", "training-dev", "--endpoint", "https://proxy.example.com"),
         expect="--endpoint: only used with --live-prices"),
    Case("arguments", "catalog-metadata-endpoint-unused",
         ("catalog", "--metadata-endpoint", "http://127.0.0.1:9"),
         expect="--metadata-endpoint: only used with --live-prices"),
]
"""Arguments that were silently ignored or taken as numbers nothing can be: refused while
parsing or before any work (the account options before any credential lookup)."""

ENDPOINT_OPTIONS = [(command, action.option_strings[0]) for command, parser in COMMANDS.items()
                    for action in parser._actions
                    if getattr(action.type, "__name__", "") == "endpoint"]
"""Every URL option of every command (an endpoint_url type), enumerated from the parser."""


@pytest.mark.parametrize("case", ARGUMENT_CASES, ids=[case.id for case in ARGUMENT_CASES])
def test_a_hostile_argument_is_one_line(case: Case, tmp_path: Path, capsys, monkeypatch):
    run_in_process(case, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("url, problem", [
    ("http://10.0.0.1", "http only to a loopback address; use https"),
    ("a b", "not an https:// URL with a host"),
    ("https://user:pw@proxy.example.com", "give scheme, host, port and path only"),
    ("file:///etc/passwd", "not an https:// URL with a host"),
])
@pytest.mark.parametrize("command, option", ENDPOINT_OPTIONS)
def test_every_url_option_refuses_what_would_send_credentials_astray(
        command: str, option: str, url: str, problem: str, tmp_path: Path, capsys, monkeypatch):
    """Refused while parsing: no credential is looked up, no request made."""
    assert {("cost", "--endpoint"), ("preflight", "--metadata-endpoint"),
            ("publish-queue-metric", "--endpoint")} <= set(ENDPOINT_OPTIONS)
    if option == "--metadata-endpoint" and url == "http://10.0.0.1":
        problem = "http only to a loopback address"  # 100.100.100.200 is the one exception
    monkeypatch.setattr(argparse.Namespace, "run", _never_run, raising=False)
    argv = [word.replace("{d}", str(tmp_path)).replace("{endpoint}", "https://x.example.com")
            for word in sample(command)]
    run_in_process(Case("url", f"{command}{option}", (*argv, option, url),
                        expect=f"argument {option}: {url!r}: {problem}"),
                   tmp_path, capsys, monkeypatch)


def _never_run(*_args: object) -> int:
    raise AssertionError("the command ran after a bad URL")


GIT_CASES = [
    Case("pr-comment", "base-not-a-commit",
         ("pr-comment", "--base", "no-such-revision", "--out", "{d}/comment.md"),
         expect="--base: 'no-such-revision' is not a commit of the git repository here"),
    Case("pr-comment", "base-an-option", ("pr-comment", "--base=--output=x", "--out",
                                          "{d}/comment.md"),
         expect="--base: '--output=x' is not a commit"),
]
"""Cases that ask git (a process: the slow tier)."""


def _filled(case: Case, directory: Path) -> Case:
    return Case(case.kind, case.name, case.argv, case.files, case.code,
                case.expect.replace("{d}", str(directory)), case.writes, case.fault)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_command_line(case: Case, tmp_path: Path, capsys, monkeypatch):
    run_in_process(_filled(case, tmp_path), tmp_path, capsys, monkeypatch)


@pytest.mark.slow  # git
@pytest.mark.parametrize("case", GIT_CASES, ids=[case.id for case in GIT_CASES])
def test_hostile_command_line_asking_git(case: Case, tmp_path: Path, capsys, monkeypatch):
    run_in_process(_filled(case, tmp_path), tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("option", ["--sarif", "--json"])
def test_a_dash_output_is_stdout_not_a_file_named_dash(option: str, tmp_path: Path, capsys,
                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan_shipped_once(monkeypatch)
    assert main(["plan", str(PROJECT_DIR / "stacks" / "Pulumi.training-dev.yaml"),
                 option, "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert ("runs" in document) == (option == "--sarif")
    assert ("resources" in document) == (option == "--json")
    assert list(tmp_path.iterdir()) == []


def test_an_image_stack_clones(tmp_path: Path, capsys):
    """The image layout has no `naming` section: the clone sets no global suffix there."""
    source = PROJECT_DIR / "stacks" / "Pulumi.image-a100.yaml"
    (tmp_path / source.name).write_text(source.read_text())
    assert main(["clone", "image-a100", "image-b", "--stacks-dir", str(tmp_path)]) == 0
    written = (tmp_path / "Pulumi.image-b.yaml").read_text()
    assert "name: image-b" in written and "naming" not in written
    assert written.endswith("\n")
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "Pulumi.image-b.yaml")]) == 0
