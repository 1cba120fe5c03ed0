"""`gpu-infra pr-comment --base SHA --out FILE`: the pull-request review comment. Plans each
stack the PR can change against the PR's base and builds ONE comment (found again by MARKER,
so each push updates it), under GitHub's size limit: each stack's report is cut from its end
(render_markdown puts the summary, the change impact, the budget verdict, the cost table and
the findings first), every stack with an equal share of the room.

Which stacks: every shipped stack when anything but stack files and docs changes (code can
change any plan), else the stacks whose stack or acknowledgement files changed.

Exit 1 when a stack's plan fails (an unacknowledged dangerous change in prod, a mandatory
policy violation, a bad stack): the workflow posts the comment, then fails.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpu_infra.schema.problems import shorten
from gpu_infra_tools.cli.arguments import OutputDirectory, OutputFile, is_stdout
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, RevisionError
from gpu_infra_tools.files import OutputError, write_text_atomically
from gpu_infra_tools.review.acknowledgements import ACKNOWLEDGED_DIR

MARKER = "<!-- gpu-infra-plan -->"
"""First line of the comment; the workflow updates the comment that starts with it."""
COMMENT_LIMIT = 65_536
"""GitHub's limit on a comment body, in characters."""
STACKS_DIR = "stacks"
NO_EFFECT_SUFFIXES = (".md",)
"""Files whose change cannot change a plan (besides stack files)."""
POLICY_CONFIG = "policies/policy-config.example.json"
GIT_TIMEOUT_SECONDS = 60
EXIT_NAMES = {0: "ok", 1: "**fails**", 2: "**bad input**"}
EXAMPLES = ("gpu-infra pr-comment --base origin/main --output plan-comment.md",)
"""Shown by `--help`; a test parses each."""


@dataclass(frozen=True)
class StackResult:
    """One stack's plan against the base: its exit code and markdown."""

    stack_name: str
    code: int
    markdown: str
    errors: str = ""

    @property
    def headline(self) -> str:
        """The first impact line of the change report, else its resource counts, else the
        first error line."""
        impact = [line[2:] for line in self.markdown.splitlines() if line.startswith("- ")]
        effects = [line for line in impact if not line.startswith(("Monthly cost", "Resources"))]
        counts = [line for line in impact if line.startswith("Resources")]
        errors = self.errors.strip().splitlines()
        return (effects or errors or counts or ["no report"])[0]


def stack_name(path: str) -> str | None:
    """`training-prod` for stacks/Pulumi.training-prod.yaml or
    stacks/acknowledged/training-prod.yaml; None for other files."""
    parts = PurePosixPath(path).parts
    if len(parts) == 2 and parts[0] == STACKS_DIR and parts[1].startswith("Pulumi."):
        return parts[1].removeprefix("Pulumi.").removesuffix(".yaml")
    if len(parts) == 3 and parts[:2] == (STACKS_DIR, ACKNOWLEDGED_DIR):
        return parts[2].removesuffix(".yaml")
    return None


def stacks_to_plan(changed: Sequence[str], shipped: Sequence[str]) -> list[str]:
    """Every shipped stack if a file that can change the program changed; else the shipped
    stacks whose stack or acknowledgement file changed (a deleted stack is not planned)."""
    touched = {stack_name(path) for path in changed}
    code_changed = any(stack_name(path) is None and not path.endswith(NO_EFFECT_SUFFIXES)
                       for path in changed)
    return sorted(shipped) if code_changed else sorted(s for s in shipped if s in touched)


def build_comment(results: Sequence[StackResult], base: str,
                  limit: int = COMMENT_LIMIT) -> str:
    """The comment: marker, a summary table (stack, result, headline), then each stack's
    report folded in <details>, cut with a note where the whole would pass `limit`."""
    head = [MARKER, f"## gpu-infra plan against `{base}`", ""]
    if not results:
        return "\n".join([*head, "No stack is affected by this change."]) + "\n"
    head += ["| Stack | Result | First effect |", "|---|---|---|"]
    head += [f"| `{r.stack_name}` | {EXIT_NAMES.get(r.code, f'exit {r.code}')} | "
             f"{r.headline.replace('|', '/')} |" for r in results]
    body = "\n".join(head) + "\n"
    for index, result in enumerate(results):
        section = _section(result)
        # each stack left gets an equal share of the room left, so one huge report cannot
        # crowd out the stacks after it (a short one leaves its unused share to them)
        room = (limit - len(body) - len(_CUT_NOTE) - 200) // (len(results) - index)
        if len(section) > room:
            section = _cut(result, max(room, 0))
        body += section
    return body


_CUT_NOTE = "\n\n*Cut to fit GitHub's comment limit: the job log has the whole report.*\n"


def _section(result: StackResult) -> str:
    errors = f"\n```\n{result.errors.strip()}\n```\n" if result.errors.strip() else ""
    return (f"\n<details{' open' if result.code else ''}><summary><code>{result.stack_name}"
            f"</code>: {EXIT_NAMES.get(result.code, result.code)}</summary>\n\n"
            f"{result.markdown.strip()}\n{errors}\n</details>\n")


def _cut(result: StackResult, room: int) -> str:
    """The stack's section cut at a line boundary to fit `room` characters, open <details>
    blocks closed, with a note."""
    kept: list[str] = []
    size = len(_CUT_NOTE) + len(result.errors) + 300
    for line in result.markdown.splitlines():
        size += len(line) + 1
        if size > room:
            break
        kept.append(line)
    text = "\n".join(kept)
    text += "\n</details>" * (text.count("<details") - text.count("</details>")) + _CUT_NOTE
    return _section(StackResult(result.stack_name, result.code, text, result.errors))


Runner = Callable[[Sequence[str]], tuple[int, str, str]]
"""Runs `gpu-infra ARGS`; returns (exit code, stdout, stderr)."""


def run_cli(args: Sequence[str]) -> tuple[int, str, str]:
    """`gpu-infra ARGS` in a subprocess of this interpreter."""
    code = "import sys; from gpu_infra_tools.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, *args],
                          capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def plan_stack(stack_name: str, base: str, run: Runner = run_cli,
               sarif_dir: Path | None = None) -> StackResult:
    """`gpu-infra plan` of the shipped stack `stack_name` against `base`, as markdown (and
    as SARIF, `<sarif_dir>/<stack>.sarif`, with `sarif_dir`)."""
    args = ["plan", f"{STACKS_DIR}/Pulumi.{stack_name}.yaml", "--against", base,
            "--format", "markdown"]
    if sarif_dir is not None:
        args += ["--sarif", str(sarif_dir / f"{stack_name}.sarif")]
    if Path(POLICY_CONFIG).is_file():
        args += ["--policy-config", POLICY_CONFIG]
    code, out, err = run(args)
    return StackResult(stack_name, code, out, err)


def changed_files(base: str) -> list[str]:
    """Files changed between `base` and HEAD (git diff --name-only); RevisionError when
    `base` is not a commit of the repository here, or git cannot run."""
    def git(*arguments: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(["git", *arguments], capture_output=True, text=True,
                                  timeout=GIT_TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise RevisionError(f"cannot run git: {error}") from None

    if git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").returncode != 0:
        raise RevisionError(f"{base!r} is not a commit of the git repository here "
                            "(fetch the base first: actions/checkout with fetch-depth: 0)")
    done = git("diff", "--name-only", base, "HEAD")
    if done.returncode != 0:
        raise RevisionError(f"git diff {base} HEAD failed: "
                            f"{shorten(done.stderr.strip() or str(done.returncode))}")
    return [line for line in done.stdout.splitlines() if line]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "pr-comment", help="plan the stacks a pull request changes against its base; write "
                           "the review comment")
    parser.add_argument("--base", required=True, help="the PR's base commit")
    parser.add_argument("--output", "--out", dest="output", type=OutputFile(), required=True,
                        metavar="FILE",
                        help="where to write the comment ('-' = stdout; the whole reports "
                             "then go to stderr)")
    parser.add_argument("--sarif-dir", type=OutputDirectory(), metavar="DIR",
                        help="also write each stack's findings and verdicts as SARIF to "
                             "DIR/<stack>.sarif (created if missing)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, runner: Runner = run_cli) -> int:
    """Write the comment; exit 1 if a stack's plan failed, 2 if the base is not a commit or
    an output cannot be written (nothing is written then). The whole reports go to stdout
    (the job log)."""
    shipped = [p.name.removeprefix("Pulumi.").removesuffix(".yaml")
               for p in Path(STACKS_DIR).glob("Pulumi.*.yaml")]
    sarif_dir = getattr(args, "sarif_dir", None)
    try:
        changed = changed_files(args.base)
        if sarif_dir is not None:
            sarif_dir.mkdir(parents=True, exist_ok=True)
    except RevisionError as error:
        print(f"--base: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        print(f"--sarif-dir: {sarif_dir}: cannot create: {error.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    results = [plan_stack(stack, args.base, runner, sarif_dir)
               for stack in stacks_to_plan(changed, shipped)]
    log = sys.stderr if is_stdout(args.output) else sys.stdout
    for result in results:
        print(result.markdown, result.errors, sep="\n", file=log)
    comment = build_comment(results, args.base[:12])
    if is_stdout(args.output):
        print(comment, end="")
    else:
        try:
            write_text_atomically(args.output, comment)
        except OutputError as error:
            print(f"--output: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
    return EXIT_FAILED if any(r.code for r in results) else EXIT_OK
