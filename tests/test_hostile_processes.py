"""Hostile input and faults through real processes: what only a process shows (a hang
stopped by a timeout, a full stdout, a closed pipe, a FIFO, concurrent clones). Each case
is bounded by a subprocess timeout; see tests/hostile.py for the checks. One process per
behaviour: test_hostile_streams.py runs every command and generator into a full, closed or
missing stdout in-process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from gpu_infra_tools.cli.common import EXIT_PIPE_CLOSED

from .conftest import PROJECT_DIR
from .hostile import (
    CASE_BOUND_S,
    TRAINING,
    Case,
    billion_laughs,
    check_output,
    cli_command,
    nested,
    run_subprocess,
)

pytestmark = pytest.mark.slow  # every case is a real process of the CLI

LAUGHS = "values, counting what aliases expand to"
PROCESS_CASES = [
    Case("hang", "laughs-validate", ("validate", "{d}/Pulumi.bad.yaml"),
         {"Pulumi.bad.yaml": billion_laughs()}, expect=LAUGHS),
    Case("hang", "laughs-plan", ("plan", "{d}/Pulumi.bad.yaml", "--json", "{d}/plan.json"),
         {"Pulumi.bad.yaml": billion_laughs()}, expect=LAUGHS),
    Case("hang", "laughs-cost", ("cost", "{d}/Pulumi.bad.yaml"),
         {"Pulumi.bad.yaml": billion_laughs()}, expect=LAUGHS),
    Case("hang", "laughs-beside-a-clone",
         ("clone", "{d}/source.yaml", "copy", "--stacks-dir", "{d}", "--name", "copy-one"),
         {"source.yaml": TRAINING, "Pulumi.bad.yaml": billion_laughs()}, expect=LAUGHS),
    Case("hang", "nested-600-validate", ("validate", "{d}/Pulumi.bad.yaml"),
         {"Pulumi.bad.yaml": nested(600)}, expect="brackets nested more than 32 levels deep"),
    Case("hang", "nested-20000-validate", ("validate", "{d}/Pulumi.bad.yaml"),
         {"Pulumi.bad.yaml": nested(20_000)}, expect="brackets nested more than 32 levels"),
    Case("hang", "nested-policy-config",
         ("plan", "training-dev", "--policy-config", "{d}/policy.json"),
         {"policy.json": "[" * 100_000}, expect="nested more than 16 levels deep"),
]


@pytest.mark.parametrize("case", PROCESS_CASES, ids=[case.id for case in PROCESS_CASES])
def test_hostile_process_ends_with_one_clear_problem(case: Case, tmp_path: Path):
    run_subprocess(case, tmp_path)


def test_a_fifo_as_stack_file_is_refused_without_opening_it(tmp_path: Path):
    """Opening a FIFO would block until a writer comes: it is never opened."""
    os.mkfifo(tmp_path / "Pulumi.fifo.yaml")
    run_subprocess(Case("hang", "fifo", ("validate", "{d}/Pulumi.fifo.yaml"),
                        expect="Pulumi.fifo.yaml: not a regular file"), tmp_path)


def test_a_full_stdout_is_one_line_and_exit_2():
    """Descriptor 1 on /dev/full from the start, and Python's own flush at exit: every
    command and generator meets a full stdout in-process (test_hostile_streams.py)."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(cli_command("validate", "training-dev"), cwd=PROJECT_DIR,
                                stdout=full, stderr=subprocess.PIPE, text=True,
                                timeout=CASE_BOUND_S)
    check_output(Case("io", "dev-full", (),
                      expect="gpu-infra: cannot write the output: No space left on device"),
                 result.returncode, "", result.stderr)
    assert len(result.stderr.splitlines()) == 1


def test_clone_into_a_closed_pipe_is_quiet(tmp_path: Path):
    (tmp_path / "Pulumi.source.yaml").write_text(TRAINING)
    process = subprocess.Popen(
        cli_command("clone", "source", "copy", "--stacks-dir", str(tmp_path), "--name",
                    "copy-one"), cwd=PROJECT_DIR, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    stderr = process.stderr.read()
    process.wait(timeout=CASE_BOUND_S)
    assert first.startswith(f"wrote {tmp_path}/Pulumi.copy.yaml")
    assert stderr == "" and process.returncode in (0, EXIT_PIPE_CLOSED)  # done before close


CONSOLE_SCRIPT = str(Path(sys.executable).with_name("gpu-infra"))
"""The installed `gpu-infra` (its entry point, not `python -c main()`)."""


def test_output_into_a_closed_pipe_ends_quietly_with_141():
    """The read end is closed before the command writes (`| head` that has had enough), so
    its first write fails: no message, no traceback, 128 + SIGPIPE. The process shows what
    in-process runs cannot (test_hostile_streams.py runs each command so): the installed
    entry point, SIGPIPE as a plan that loads Pulumi and gRPC leaves it, and the flush at
    exit."""
    process = subprocess.Popen([CONSOLE_SCRIPT, "plan", "training-dev", "--format", "json"],
                               cwd=PROJECT_DIR, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdout.close()
    stderr = process.stderr.read()
    assert (process.wait(timeout=CASE_BOUND_S), stderr) == (EXIT_PIPE_CLOSED, "")


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback():
    """SIGINT arrives while the console script imports the commands (the moment `pulumi` is
    first imported), before the command's own handler exists."""
    interrupt_while_loading = "\n".join([
        "import os, signal, sys",
        "from importlib.metadata import entry_points",
        "class InterruptOnPulumi:",
        "    def find_spec(self, name, path=None, target=None):",
        "        if name == 'pulumi':",
        "            os.kill(os.getpid(), signal.SIGINT)",
        "sys.meta_path.insert(0, InterruptOnPulumi())",
        "sys.argv = ['gpu-infra', 'plan', 'training-dev']",  # plan loads pulumi
        "entry_points(group='console_scripts')['gpu-infra'].load()()"])
    done = subprocess.run([sys.executable, "-c", interrupt_while_loading], cwd=PROJECT_DIR,
                          capture_output=True, text=True, timeout=CASE_BOUND_S)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "\ninterrupted\n")


CLONES = 20

CLONE_AT_ONCE = """
import json, os, signal, sys, traceback
from gpu_infra_tools import cli
import gpu_infra_tools.cli.clone  # noqa: F401 (loaded once, before the fork)

scratch, argvs = sys.argv[1], json.loads(sys.argv[2])
gate_read, gate_write = os.pipe()
children = []
for index, argv in enumerate(argvs):
    pid = os.fork()
    if pid == 0:
        os.close(gate_write)
        signal.alarm(100)  # a child that hangs dies on its own
        for stream, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(f"{scratch}/{index}.{name}", os.O_WRONLY | os.O_CREAT), stream)
        os.read(gate_read, 1)  # returns (EOF) for every child at once when the gate closes
        try:
            code = cli.main(argv)
        except BaseException:
            traceback.print_exc()
            code = 70
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    children.append(pid)
os.close(gate_write)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
print(json.dumps([{"returncode": code, "stderr": open(f"{scratch}/{i}.err").read()}
                  for i, code in enumerate(codes)]))
"""
"""Forks one process per argument list from a parent that has loaded the CLI once, holds them
at a gate until all exist, then lets them run `gpu-infra ARGV` at the same moment and prints
their exit codes and stderr as JSON. Separate processes with their own descriptors, as 20
separate commands would be (the clone lock is a flock per open descriptor), without paying
the CLI's start-up 20 times: that start-up was a sixth of the whole suite's time."""


def _clone_all(directory: Path, names: list[str | None]) -> list[dict]:
    """Run one `clone source copy-NN` process per name (None: the name is derived from
    copy-NN), all released at once; their exit codes and stderr."""
    argvs = [["clone", "source", f"copy-{index:02d}", "--stacks-dir", str(directory),
              *(["--name", name] if name else [])] for index, name in enumerate(names)]
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run([sys.executable, "-c", CLONE_AT_ONCE, scratch, json.dumps(argvs)],
                              cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_concurrent_clones_never_share_a_cidr_or_a_name(tmp_path: Path):
    """20 clones at once: 10 with names of their own, 10 asking for the same name. Every
    clone written has its own VPC CIDR and cluster name; the shared name goes to one."""
    (tmp_path / "Pulumi.source.yaml").write_text(TRAINING)
    names = [None] * (CLONES // 2) + ["same-name"] * (CLONES // 2)
    results = _clone_all(tmp_path, names)
    own, shared = results[:CLONES // 2], results[CLONES // 2:]
    assert [r["returncode"] for r in own] == [0] * len(own), [r["stderr"] for r in own]
    assert sorted(r["returncode"] for r in shared) == [0] + [2] * (len(shared) - 1)
    assert all(re.search(r"'same-name' is already the cluster name of stack copy-\d\d",
                         r["stderr"]) for r in shared if r["returncode"])
    assert all("Traceback" not in r["stderr"] for r in results)
    clusters = [yaml.safe_load(path.read_text())["config"]["gpu-infra:cluster"]
                for path in sorted(tmp_path.glob("Pulumi.copy-*.yaml"))]
    cidrs = [cluster["network"]["vpc_cidr"] for cluster in clusters] + ["10.10.0.0/16"]
    assert len(clusters) == len(own) + 1
    assert len(set(cidrs)) == len(cidrs)  # the source's 10.10.0.0/16 included
    assert len({cluster["name"] for cluster in clusters}) == len(clusters)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files


def _generator(module: str, stdout: int | None = None, *args: str,
               **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=PROJECT_DIR,
                          stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=CASE_BOUND_S * 4, **options)


def test_a_generator_with_stdout_closed_from_the_start_is_one_line_and_exit_2():
    """Python starts without sys.stdout when descriptor 1 is closed; test_hostile_streams.py
    gives every generator a missing sys.stdout (and an unknown argument) in-process."""
    module = "gpu_infra_tools.reference.cli"
    closed = _generator(module, None, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert closed.returncode == 2, closed.stderr
    assert closed.stderr.splitlines() == [
        f"python -m {module}: cannot write the output: standard output is closed"]


def test_a_generator_into_a_full_stdout_is_one_line_and_exit_2():
    """Descriptor 1 on /dev/full from the start and the flush at exit (every generator meets
    a full stdout in-process: test_hostile_streams.py)."""
    module = "gpu_infra_tools.reference.cli"
    with open("/dev/full", "w") as full:
        done = _generator(module, full.fileno())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"python -m {module}: cannot write the output: No space left on device"]


def test_refresh_prices_with_stdout_closed_from_the_start_is_one_line(tmp_path: Path):
    """It was exit 0 with the prices lost; a closed stdout is found before any request. The
    process starts with descriptor 1 closed (a full stdout is in-process:
    test_hostile_streams.py)."""
    from .alibaba_standin import KEY_ID, SECRET, Account, serving

    env = {**os.environ, "ALIBABA_CLOUD_ACCESS_KEY_ID": KEY_ID,
           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": SECRET, "HOME": str(tmp_path)}
    env.pop("ALIBABA_CLOUD_ECS_METADATA", None)
    kind = "ecs.gn7i-c8g1.2xlarge"
    with serving(Account(prices={kind: 9.1})) as stand_in:
        done = _generator("gpu_infra_tools.cli.refresh_prices", None, "--region",
                          "cn-beijing", "--type", kind, "--dry-run", "--endpoint",
                          stand_in.url, env=env, preexec_fn=lambda: os.close(1))
        requests = len(stand_in.requests)
    assert (done.returncode, done.stderr) == (
        2, "gpu-infra: cannot write the output: standard output is closed\n")
    assert requests == 0
