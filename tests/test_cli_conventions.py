"""What a user expects of any command line: --version, --help with a description and
examples per command, shell completion, a progress line for slow plans."""

from __future__ import annotations

import io
import json
import shlex
import signal
import subprocess
import sys
import threading
from importlib.metadata import version

import pytest
import yaml

from gpu_infra_tools.cli import build_parser, command_modules, main
from gpu_infra_tools.cli.progress import ERASE_LINE, progress_line

from .conftest import PROJECT_DIR


def command_line(example: str) -> list[str]:
    """The arguments of an example, without the program name and any redirection."""
    words = shlex.split(example)
    assert words[0] == "gpu-infra", example
    return words[1:words.index(">")] if ">" in words else words[1:]


def test_version(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"gpu-infra {version('gpu-infra')}\n"


@pytest.mark.parametrize("command", command_modules(), ids=lambda module: module.__name__)
def test_help_describes_each_command_with_examples_that_parse(command, capsys):
    assert command.EXAMPLES and command.__doc__
    name = command_line(command.EXAMPLES[0])[0]
    with pytest.raises(SystemExit):
        main([name, "--help"])
    help_text = capsys.readouterr().out
    assert command.__doc__.splitlines()[0] in help_text
    assert "examples:\n" + "\n".join(f"  {e}" for e in command.EXAMPLES) in help_text
    parser = build_parser()
    for example in command.EXAMPLES:
        args = parser.parse_args(command_line(example))
        assert args.run.__module__ == command.__name__


def test_a_reused_parser_keeps_nothing_of_an_earlier_command_line(tmp_path, capsys):
    """main builds each command's parser once per process: a second run of a command starts
    from the defaults again (`--set` appends to a fresh list, not to the last run's)."""
    source = PROJECT_DIR / "stacks" / "Pulumi.training-dev.yaml"
    clone = ["clone", str(source), "copy", "--stacks-dir", str(tmp_path), "--dry-run"]
    assert main([*clone, "--name", "copy-one", "--set", "fleet.nodes=3"]) == 0
    assert "nodes: 3" in capsys.readouterr().out
    assert main(clone) == 0
    second = capsys.readouterr().out
    assert "nodes: 3" not in second and "name: copy-one" not in second


@pytest.mark.slow  # runs the completion in bash
def test_bash_completion_completes_commands_and_options(tmp_path, capsys):
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "gpu-infra.bash"
    script.write_text(capsys.readouterr().out)

    def complete(*words: str) -> list[str]:
        line = " ".join(("gpu-infra", *words))
        probe = (f"source {shlex.quote(str(script))}; COMP_WORDS=({line}); "
                 f"COMP_CWORD={len(words)}; _shtab_gpu_infra; echo ${{COMPREPLY[@]}}")
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True,
                              timeout=30, cwd=PROJECT_DIR)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("pl") == ["plan"]
    assert complete("cost", "--compare-r") == ["--compare-revision"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal_for_a_slow_block_only():
    stream, shown = _Terminal(), threading.Event()
    original_write = stream.write

    def write(text: str) -> int:
        if "planning x" in text:
            shown.set()
        return original_write(text)

    stream.write = write  # type: ignore[method-assign]
    with progress_line("planning x", stream, delay=0.01, interval=0.01):
        assert shown.wait(30)
    assert stream.getvalue().startswith(f"{ERASE_LINE}planning x: ")
    assert stream.getvalue().endswith(ERASE_LINE)
    quick = _Terminal()
    with progress_line("planning y", quick, delay=30):
        pass
    assert quick.getvalue() == ""


def test_no_progress_line_when_not_a_terminal():
    pipe = io.StringIO()
    with progress_line("planning x", pipe, delay=0, interval=0.01):
        threading.Event().wait(0.05)
    assert pipe.getvalue() == ""


@pytest.mark.slow  # a CLI process
def test_ctrl_c_during_a_plan_exits_130_without_traceback_or_hang(tmp_path):
    document = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.training-prod.yaml").read_text())
    cluster = document["config"]["gpu-infra:cluster"]
    cluster["fleet"]["nodes"] = 256  # a plan of several seconds
    cluster["fleet"].pop("reserved")
    cluster.pop("monthly_budget_cny")
    stack = tmp_path / "Pulumi.big.yaml"
    stack.write_text(yaml.safe_dump(document))
    interrupt_soon = ("import os, signal, sys, threading; from gpu_infra_tools.cli import main; "
                      "threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start(); "
                      f"sys.exit(main(['plan', {str(stack)!r}]))")
    done = subprocess.run([sys.executable, "-c", interrupt_soon], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (130, "\ninterrupted\n")


def test_the_interrupt_handler_is_only_there_while_a_command_runs(capsys):
    before = signal.getsignal(signal.SIGINT)
    assert main(["schema"]) == 0
    assert signal.getsignal(signal.SIGINT) is before
    capsys.readouterr()


PULUMI_PACKAGES = {"pulumi", "pulumi_alicloud", "pulumi_policy"}


@pytest.mark.slow  # a Python process per command
@pytest.mark.parametrize("argv", [["schema"], ["catalog"], [
    "catalog", "--recommend", "--layout", "training", "--gpu-memory", "80", "--gpus", "64",
    "--multi-node", "--region", "cn-beijing"],
    # fixed nodes, a scaling fleet (both render their user data), ACK, an image stack
    ["validate", "training-prod"], ["validate", "inference-prod"],
    ["validate", "training-ack"], ["validate", "image-a100"]], ids=" ".join)
def test_commands_that_plan_nothing_load_no_pulumi(argv):
    """A command imports its own module only: these finish without loading Pulumi, the
    provider SDK, the policy pack or the plan engine (a second or so of imports); validate
    judges the nodes' user data with the Pulumi-free node plans (gpu_infra.nodeplan)."""
    probe = ("import json, sys\nfrom gpu_infra_tools.cli import main\n"
             f"code = main({argv!r})\n"
             "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in "
             f"{sorted(PULUMI_PACKAGES)!r} or m.startswith(('gpu_infra_policies', "
             "'gpu_infra_tools.plan')))]), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT_DIR, capture_output=True,
                          text=True, timeout=60)
    code, loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert (code, loaded) == (0, [])
