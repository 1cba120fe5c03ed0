"""The landing tools (tools/land, tools/check_reverts.py) on a throwaway repository: a
squash that would undo lines main landed after the branch forked is refused, a branch
rebased on main lands, and main only ever moves forward."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "tools" / "check_reverts.py"
LAND = ROOT / "tools" / "land"

pytestmark = pytest.mark.slow

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV}).stdout.strip()


def commit(repo: Path, name: str, text: str, message: str) -> str:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    commit(main, "notes.txt", "first line of notes\n", "start")
    return main


def check(repo: Path, base: str, tip: str, candidate: str, *message: str):
    return subprocess.run([sys.executable, str(CHECK), base, tip, candidate, *message],
                          cwd=repo, capture_output=True, text=True)


def test_a_squash_that_drops_a_line_main_landed_is_refused(repo: Path, tmp_path: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    tip = commit(repo, "notes.txt", "first line of notes\nlanded by someone else\n", "other")
    git(repo, "checkout", "-q", "-b", "stale", base)
    stale = commit(repo, "notes.txt", "first line of notes\nmine\n", "stale copy")
    verdict = check(repo, base, tip, stale)
    assert verdict.returncode == 1
    assert "notes.txt: removes 1x a line main landed after the fork: landed by someone else" \
        in verdict.stdout
    message = tmp_path / "message"
    message.write_text("undo\n\nIntended-revert: notes.txt\n")
    assert check(repo, base, tip, stale, str(message)).returncode == 0


def test_a_change_on_top_of_main_is_no_revert(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    tip = commit(repo, "notes.txt", "first line of notes\nlanded by someone else\n", "other")
    ahead = commit(repo, "more.txt", "a new file of mine\n", "mine")
    verdict = check(repo, base, tip, ahead)
    assert verdict.returncode == 0, verdict.stdout


def test_land_squashes_a_branch_and_moves_main_forward(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "a.txt", "part one of the work\n", "one")
    commit(repo, "b.txt", "part two of the work\n", "two")
    git(repo, "checkout", "-q", "main")
    landed_before = commit(repo, "notes.txt", "first line of notes\nother work\n", "other")
    message = tmp_path / "message"
    message.write_text("The work, squashed\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"),
           "LAND_GATE": "test -f a.txt"}
    result = subprocess.run(["bash", str(LAND), "work", str(message)], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "log", "-1", "--format=%s") == "The work, squashed"
    assert git(repo, "rev-parse", "HEAD~1") == landed_before
    assert (repo / "a.txt").read_text() == "part one of the work\n"
    assert "other work" in (repo / "notes.txt").read_text()


def test_a_train_lands_each_branch_as_its_own_commit(repo: Path, tmp_path: Path) -> None:
    for name in ("first", "second"):
        git(repo, "checkout", "-q", "-b", name, "main")
        commit(repo, f"{name}.txt", f"the {name} piece of work\n", name)
    git(repo, "checkout", "-q", "main")
    messages = []
    for name in ("first", "second"):
        messages += [name, str(tmp_path / name)]
        (tmp_path / name).write_text(f"Land {name}\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"),
           "LAND_GATE": "test -f first.txt -a -f second.txt"}
    result = subprocess.run(["bash", str(LAND), *messages], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(repo, "log", "-2", "--format=%s").splitlines() == ["Land second", "Land first"]
    assert (repo / "second.txt").is_file()


def test_a_train_leaves_out_a_branch_that_conflicts(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "clash", "main")
    commit(repo, "notes.txt", "a clashing first line\n", "clash")
    git(repo, "checkout", "-q", "-b", "fine", "main")
    commit(repo, "fine.txt", "a piece that merges\n", "fine")
    git(repo, "checkout", "-q", "main")
    commit(repo, "notes.txt", "main's own first line\n", "main moves")
    for name in ("clash", "fine"):
        (tmp_path / name).write_text(f"Land {name}\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "true"}
    result = subprocess.run(["bash", str(LAND), "clash", str(tmp_path / "clash"), "fine",
                             str(tmp_path / "fine")], cwd=repo, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "clash does not merge cleanly onto main; conflicts in: notes.txt" in result.stderr
    assert git(repo, "log", "-1", "--format=%s") == "Land fine"
    assert (repo / "notes.txt").read_text() == "main's own first line\n"


def test_land_leaves_itself_in_place(repo: Path, tmp_path: Path) -> None:
    """A landing started from inside another one's gate (these tests, when main's own gate
    runs them) still copies itself: the copy, not the script, is removed at the end."""
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "a.txt", "part one of the work\n", "one")
    git(repo, "checkout", "-q", "main")
    script = tmp_path / "tools" / "land"
    script.parent.mkdir()
    script.write_text(LAND.read_text())
    (script.parent / "check_reverts.py").write_text(CHECK.read_text())
    message = tmp_path / "message"
    message.write_text("Work\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "true",
           "LAND_TOOLS": str(ROOT / "tools"), "LAND_COPY": "/nonexistent/copy"}
    result = subprocess.run(["bash", str(script), "work", str(message)], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert script.is_file()


def test_land_keeps_main_when_the_gate_fails(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "a.txt", "part one of the work\n", "one")
    git(repo, "checkout", "-q", "main")
    before = git(repo, "rev-parse", "main")
    message = tmp_path / "message"
    message.write_text("Broken work\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "false"}
    result = subprocess.run(["bash", str(LAND), "work", str(message)], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "the gate failed" in result.stdout
    assert git(repo, "rev-parse", "main") == before


def land_regenerating(repo: Path, tmp_path: Path,
                      generate: str) -> subprocess.CompletedProcess[str]:
    """Land branch `work`, whose records in gen/ `generate` writes; it lands."""
    message = tmp_path / "message"
    message.write_text("Work with a record\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "true",
           "LAND_GENERATED": "gen/", "LAND_REGENERATE": generate}
    result = subprocess.run(["bash", str(LAND), "work", str(message)], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_conflicts_only_in_generated_files_are_regenerated(repo: Path, tmp_path: Path) -> None:
    """Two branches that each re-record a generated file conflict in it; the landing keeps
    main's copy, regenerates it from the merged sources, and the revert check lets the
    regenerated file replace main's lines."""
    generate = "mkdir -p gen && cat ./*.src > gen/out.txt"
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "second.src", "a source line of the branch\n", "source")
    subprocess.run(generate, shell=True, cwd=repo, check=True)
    git(repo, "add", "gen")
    git(repo, "commit", "-q", "-m", "record")
    git(repo, "checkout", "-q", "main")
    commit(repo, "first.src", "a source line landed on main\n", "main's source")
    subprocess.run(generate, shell=True, cwd=repo, check=True)
    git(repo, "add", "gen")
    git(repo, "commit", "-q", "-m", "main's record")
    result = land_regenerating(repo, tmp_path, generate)
    assert "conflicted only in generated files; regenerated: gen/out.txt" in result.stdout
    assert (repo / "gen" / "out.txt").read_text() == (
        "a source line landed on main\na source line of the branch\n")
    assert "Intended-revert" not in git(repo, "log", "-1", "--format=%B")


def test_a_failed_regeneration_is_a_conflict(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "gen.txt", "the branch's record\n", "record")
    git(repo, "checkout", "-q", "main")
    commit(repo, "gen.txt", "main's record\n", "main's record")
    message = tmp_path / "message"
    message.write_text("Work\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "true",
           "LAND_GENERATED": "gen", "LAND_REGENERATE": "false"}
    before = git(repo, "rev-parse", "main")
    result = subprocess.run(["bash", str(LAND), "work", str(message)], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "does not merge cleanly onto main; conflicts in: gen.txt" in result.stderr
    assert git(repo, "rev-parse", "main") == before


def test_the_changelog_keeps_both_sides_entries(repo: Path, tmp_path: Path) -> None:
    """The repository's .gitattributes merges CHANGELOG.md as a union: two branches that each
    add an entry at the top both land."""
    (repo / ".gitattributes").write_text((ROOT / ".gitattributes").read_text())
    commit(repo, "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n## 0.1.0\n", "log")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n- the branch's entry\n\n"
           "## 0.1.0\n", "entry")
    git(repo, "checkout", "-q", "main")
    commit(repo, "CHANGELOG.md", "# Changelog\n\n## Unreleased\n\n- main's entry\n\n"
           "## 0.1.0\n", "main's entry")
    message = tmp_path / "message"
    message.write_text("Work\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "true"}
    result = subprocess.run(["bash", str(LAND), "work", str(message)], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    changelog = (repo / "CHANGELOG.md").read_text()
    assert "- main's entry\n" in changelog and "- the branch's entry\n" in changelog


def test_a_conflict_inside_a_generated_section_of_a_page_is_regenerated(
        repo: Path, tmp_path: Path) -> None:
    """Two branches that each change a generated table of a page conflict there; the landing
    keeps the rest of both sides and generates the section anew. A conflict in the prose of
    a page is still a conflict."""
    page = ("# Sizes\n\nProse of the page.\n\n<!-- generated: sizes -->\n| size |\n| {} |\n"
            "<!-- end generated -->\n\n{}\n")
    commit(repo, "page.md", page.format(1, "Closing words."), "page")
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "size.txt", "20\n", "size")
    commit(repo, "page.md", page.format(20, "Closing words.").replace(
        "Prose of the page.", "Prose of the page, told better."), "branch's table and prose")
    git(repo, "checkout", "-q", "-b", "prose", "main")
    commit(repo, "page.md", page.format(1, "Other closing words."), "clashing prose")
    git(repo, "checkout", "-q", "main")
    commit(repo, "other.txt", "3\n", "main's source")
    commit(repo, "page.md", page.format(3, "Closing words, by main."), "main's table and prose")
    generate = ("python3 -c \"import pathlib, re; p = pathlib.Path('page.md'); "
                "n = sum(int(f.read_text()) for f in map(pathlib.Path, "
                "['size.txt', 'other.txt']) if f.exists()); "
                "p.write_text(re.sub(r'\\| \\d+ \\|', f'| {n} |', p.read_text()))\"")
    for name in ("work", "prose"):
        (tmp_path / name).write_text(f"Land {name}\n")
    env = {**os.environ, **GIT_ENV, "LAND_WORKTREE": str(tmp_path / "land"), "LAND_GATE": "true",
           "LAND_GENERATED": "gen/", "LAND_REGENERATE": generate}
    result = subprocess.run(["bash", str(LAND), "work", str(tmp_path / "work"), "prose",
                             str(tmp_path / "prose")], cwd=repo, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "prose does not merge cleanly onto main; conflicts in: page.md" in result.stderr
    assert (repo / "page.md").read_text() == page.format(23, "Closing words, by main.").replace(
        "Prose of the page.", "Prose of the page, told better.")


def test_the_default_regeneration_runs_the_project_tests_without_xdist(tmp_path: Path) -> None:
    """tools/land regenerates with `pytest -p no:xdist`: this project's conftest loads there
    (its xdist hook is optional)."""
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                             "--collect-only", "tests/test_land_tools.py"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "no:xdist" in LAND.read_text()


@pytest.mark.parametrize("record", ["cat", "tr a-z A-Z"])  # git sees a rename / a deletion
def test_a_recording_main_moved_that_the_branch_changed_is_regenerated(
        repo: Path, tmp_path: Path, record: str) -> None:
    """Main re-records into a content-addressed layout (gen/<sha256> and an index naming it,
    as the golden texts) and deletes the per-stack file a branch still changes; both change
    the index. The deletion stands (where git sees a rename, the file it carried the
    branch's edit into goes) and the merged sources are recorded anew in main's layout."""
    commit(repo, "first.src", "a source line\n", "source")
    (repo / "gen" / "stack").mkdir(parents=True)
    commit(repo, "gen/index", "stack/out.txt\n", "index")
    commit(repo, "gen/stack/out.txt", "a source line\n", "per-stack record")
    git(repo, "checkout", "-q", "-b", "work")
    commit(repo, "second.src", "a source line of the branch\n", "branch's source")
    commit(repo, "gen/index", "stack/out.txt, two lines\n", "branch's index")
    commit(repo, "gen/stack/out.txt", "a source line\na source line of the branch\n",
           "branch's per-stack record")
    git(repo, "checkout", "-q", "main")
    generate = (f"rm -rf gen && mkdir gen && cat ./*.src | {record} > gen/text "
                "&& h=$(sha256sum gen/text | cut -c1-64) && mv gen/text gen/$h "
                "&& echo $h > gen/index")
    subprocess.run(generate, shell=True, cwd=repo, check=True)
    moved = (repo / "gen" / "index").read_text().strip()
    git(repo, "add", "-A", "gen")
    git(repo, "commit", "-q", "-m", "content-addressed records")
    result = land_regenerating(repo, tmp_path, generate)
    assert "conflicted only in generated files" in result.stdout
    digest = (repo / "gen" / "index").read_text().strip()
    assert digest != moved
    assert sorted(p.name for p in (repo / "gen").iterdir()) == sorted([digest, "index"])
    assert (repo / "gen" / digest).read_text() == subprocess.run(
        record, shell=True, input="a source line\na source line of the branch\n",
        capture_output=True, text=True).stdout
    assert git(repo, "status", "--porcelain") == ""
