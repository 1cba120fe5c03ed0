"""Helpers shared by the commands: locating the project and stacks, printing problems."""

from __future__ import annotations

import argparse
import errno
import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_infra.schema import ClusterConfig, ConfigError, load_cluster_config, resolve_stack_path
from gpu_infra.schema.environments import read_pulumi_config
from gpu_infra.schema.loader import PROJECT, StackFile, read_stack_file
from gpu_infra_tools.cli.arguments import InputDirectory, InputFile, non_empty
from gpu_infra_tools.cli.streams import DiagnosticStream, fill_closed_streams

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERNAL = 70
"""An exception no command expected (a bug), reported in one line: EX_SOFTWARE of sysexits."""
EXIT_PIPE_CLOSED = 141
"""The reader of the output went away (`gpu-infra ... | head`): 128 + SIGPIPE, the status
every tool killed by SIGPIPE reports (cat, grep, git log), so `set -o pipefail` tells cut
output from complete output; 0 would claim output nobody read in full, 1 means a failed
program or a policy violation here."""


def project_dir() -> Path:
    """The nearest directory at or above the working directory holding Pulumi.yaml, else the
    working directory."""
    here = Path.cwd().resolve()
    return next((d for d in (here, *here.parents) if (d / "Pulumi.yaml").is_file()), here)


def add_stack_argument(parser: argparse.ArgumentParser) -> None:
    """The STACK positional, --stacks-dir and --environment-values options."""
    parser.add_argument("stack", metavar="STACK", type=non_empty,
                        help="stack name in the stacks directory, or a path to a stack file")
    parser.add_argument("--stacks-dir", type=InputDirectory(), default=None,
                        help="directory of Pulumi.<stack>.yaml files (default: PROJECT/stacks)")
    parser.add_argument("--environment-values", type=InputFile(MAX_ENVIRONMENT_BYTES),
                        action="append", default=[], metavar="FILE",
                        help="the resolved values of an ESC environment the stack imports "
                             "(`environment:`), the JSON `esc env open ENV` prints; its "
                             "pulumiConfig fills the keys the stack file does not set "
                             "(repeatable: later files win)")


MAX_ENVIRONMENT_BYTES = 1 << 20
"""The largest `--environment-values` file read."""


def environment_config(args: argparse.Namespace) -> dict[str, Any]:
    """The `pulumiConfig` of the `--environment-values` files, later files winning; raises
    ConfigError (one line per file) for a file that is not an opened environment's JSON."""
    merged: dict[str, Any] = {}
    for path in getattr(args, "environment_values", []):
        merged.update(read_pulumi_config(path, PROJECT))
    return merged


def load_stack_arguments(args: argparse.Namespace, path: Path
                         ) -> tuple[StackFile, ClusterConfig]:
    """The stack file at `path` and its validated cluster, with the `--environment-values`
    (ConfigError as load_cluster_config). Says on stderr what was done with the
    environments' values, and which environments the stack imports that no file resolves."""
    environment = environment_config(args)
    try:
        stack_file, cluster = load_cluster_config(path, environment)
    except ConfigError as error:
        unseen = unseen_environments(path, environment)
        raise ConfigError(error.source, [*error.problems, *unseen]) from None
    for note in [*stack_file.notes, *unseen_environments(path, environment)]:
        print(f"note: {note}", file=sys.stderr)
    return stack_file, cluster


def unseen_environments(path: Path, environment: dict[str, Any]) -> list[str]:
    """One line, when the stack imports ESC environments and no --environment-values was
    given: their config is invisible offline."""
    try:
        names = read_stack_file(path).environments
    except ConfigError:
        return []
    if not names or environment:
        return []
    return [f"environment: the stack imports {', '.join(names)}; their config is not visible "
            "offline: pass --environment-values FILE with the JSON of `esc env open "
            f"{names[0]}`"]


def stack_path(args: argparse.Namespace) -> Path:
    """The stack file the arguments name."""
    return resolve_stack_path(args.stack, args.stacks_dir or project_dir() / "stacks")


def stdout_failed(error: OSError) -> int:
    """Report once that stdout cannot be written (e.g. it is /dev/full) and return the
    bad-input exit code. A closed pipe (`| head`: the reader has what it wanted) is quiet and
    returns EXIT_PIPE_CLOSED. stdout (and, for a closed pipe, stderr) is pointed at
    /dev/null first, so the text still buffered for it does not fail again, with a
    traceback, when Python exits."""
    closed = isinstance(error, BrokenPipeError)
    for stream in (sys.stdout, sys.stderr) if closed else (sys.stdout,):
        if stream is None:  # closed when Python started
            continue
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, io.UnsupportedOperation):  # a stream without a descriptor
            pass
    if closed:
        return EXIT_PIPE_CLOSED
    print(f"gpu-infra: cannot write the output: {error.strerror or error}", file=sys.stderr)
    return EXIT_BAD_INPUT


def with_standard_streams(run: Callable[[], int]) -> int:
    """Run a command (`run` returns its exit code) with its standard streams made safe
    (cli.streams): a closed stdout is one line and exit 2 before any work, an output that
    cannot be written (stdout full, the reader gone) is stdout_failed's, and a stderr that
    cannot be written loses the messages, never the exit code."""
    stdout_closed = fill_closed_streams()
    stderr = sys.stderr
    sys.stderr = DiagnosticStream(stderr)
    try:
        if stdout_closed:  # started with `>&-`: the output would be lost
            return stdout_failed(OSError(errno.EBADF, "standard output is closed"))
        try:
            code = run()
            sys.stdout.flush()  # a full disk behind stdout shows here, not at exit
        except OSError as error:
            if error.filename is not None:  # a file, not stdout: the command's own problem
                raise
            return stdout_failed(error)
        return code
    finally:
        sys.stderr = stderr


def report_problems(error: ConfigError, what: str = "invalid stack") -> int:
    """Print one line per problem to stderr; return the bad-input exit code."""
    print(f"{what}: {error.source}", file=sys.stderr)
    for problem in error.problems:
        print(f"  {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT


class RevisionError(Exception):
    """A git revision of a stack file cannot be read (no git, not a repository, bad rev)."""


def stack_file_at_revision(path: Path, revision: str, scratch: Path) -> Path | None:
    """The stack file at `path` as it was at git `revision`, written under `scratch` with
    the same file name (the name is the stack's); None if the file did not exist then."""
    directory = path.resolve().parent

    def git(*arguments: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(["git", "-C", str(directory), *arguments],
                                  capture_output=True, text=True, timeout=60)
        except OSError as error:
            raise RevisionError(f"cannot run git: {error.strerror}") from None

    checked = git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if checked.returncode != 0:
        raise RevisionError(f"{revision!r} is not a commit of a git repository holding "
                            f"{path}")
    shown = git("show", f"{revision}:./{path.name}")
    if shown.returncode != 0:
        return None
    old = scratch / path.name
    old.write_text(shown.stdout, encoding="utf-8")
    return old
