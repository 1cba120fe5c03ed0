"""Path arguments checked while the command line is parsed, before a command does any work:
each is an argparse `type=` that refuses a path which can never serve (missing, the wrong
kind, unreadable, unwritable, too large) with one line naming the option and the path, and
exit code 2 (argparse's error). Nothing is opened here: a FIFO is refused by its kind,
never waited on.

`-` for an output file means standard output (STDOUT)."""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import stat
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from gpu_infra.schema.problems import shorten

STDOUT = Path("-")
"""An output file argument of `-`: write to standard output."""


def is_stdout(path: Path | None) -> bool:
    """Whether an output file argument means standard output."""
    return path is not None and str(path) == str(STDOUT)


class PathArgument:
    """An argparse `type=` for a path; `kind` names what it must be (in `--help` and in the
    test that drives every path argument of every command)."""

    kind = "path"

    def __call__(self, text: str) -> Path:
        if not text:
            raise argparse.ArgumentTypeError("empty path")
        if "\0" in text:
            raise argparse.ArgumentTypeError("the path contains a NUL byte")
        path = Path(text)
        try:
            self.check(path)
        except OSError as error:  # a name too long, a loop of links, an I/O error
            raise argparse.ArgumentTypeError(f"{text}: {error.strerror or error}") from None
        return path

    def check(self, path: Path) -> None:
        """Raise ArgumentTypeError (one line, starting with the path) if `path` cannot serve."""
        raise NotImplementedError

    def __repr__(self) -> str:  # argparse names a type by its repr in some messages
        return self.kind


def _stat(path: Path) -> os.stat_result | None:
    """`path`'s status (following links), None if it does not exist."""
    try:
        return path.stat()
    except (FileNotFoundError, NotADirectoryError):  # missing, or below a file
        return None


def _refuse(path: Path, problem: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{path}: {problem}")


class InputFile(PathArgument):
    """A file to read: it exists, is a regular file, is readable and holds at most
    `max_bytes` bytes."""

    kind = "input file"

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes

    def check(self, path: Path) -> None:
        status = _stat(path)
        if status is None:
            raise _refuse(path, "cannot read: No such file or directory")
        if stat.S_ISDIR(status.st_mode):
            raise _refuse(path, "cannot read: Is a directory; give a file")
        if not stat.S_ISREG(status.st_mode):
            raise _refuse(path, "cannot read: not a regular file")
        if not os.access(path, os.R_OK):
            raise _refuse(path, "cannot read: Permission denied")
        if status.st_size > self.max_bytes:
            raise _refuse(path, f"larger than {self.max_bytes} bytes, the most this file "
                                "may have")


class OutputFile(PathArgument):
    """A file to write (`-`: standard output): not a directory, in a directory that exists
    and can be written. An existing non-regular file (a terminal, /dev/stdout) is written
    directly when the time comes."""

    kind = "output file"

    def check(self, path: Path) -> None:
        if is_stdout(path):
            return
        status = _stat(path)
        if status is not None and stat.S_ISDIR(status.st_mode):
            raise _refuse(path, "is a directory; give a file name")
        if status is not None and not stat.S_ISREG(status.st_mode):
            return
        _check_writable_directory(path.parent, path)


class OutputDirectory(PathArgument):
    """A directory to write files in: a directory that can be written, or missing (it is
    created, with its parents) below a directory that can be."""

    kind = "output directory"

    def check(self, path: Path) -> None:
        existing = path
        while (status := _stat(existing)) is None and existing != existing.parent:
            existing = existing.parent
        if status is not None and not stat.S_ISDIR(status.st_mode):
            raise _refuse(path, "is a file, not a directory" if existing == path
                          else f"cannot be created: {existing} is not a directory")
        _check_writable_directory(existing, path)


class InputDirectory(PathArgument):
    """A directory that exists and can be read."""

    kind = "input directory"

    def check(self, path: Path) -> None:
        status = _stat(path)
        if status is None:
            raise _refuse(path, "no such directory")
        if not stat.S_ISDIR(status.st_mode):
            raise _refuse(path, "is a file, not a directory")
        if not os.access(path, os.R_OK | os.X_OK):
            raise _refuse(path, "cannot read the directory: Permission denied")


def _check_writable_directory(directory: Path, target: Path) -> None:
    status = _stat(directory)
    if status is None:
        raise _refuse(target, f"the directory {directory} does not exist")
    if not stat.S_ISDIR(status.st_mode):
        raise _refuse(target, f"{directory} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _refuse(target, f"cannot write in {directory}: Permission denied")


LOOPBACK_NAMES = ("localhost",)
"""Host names that are loopback addresses (besides 127.0.0.0/8 and ::1)."""


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name) is this machine."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in LOOPBACK_NAMES


def number_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from `low` to `high` (NaN and infinities refused)."""
    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}, not a number") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: must be a finite number "
                                              f"from {low:.15g} to {high:.15g}")
        return value
    return number


def endpoint_url(http_to: Callable[[str], bool] = is_loopback) -> Callable[[str], str]:
    """An argparse type: an https URL with a host and nothing but a port and path; http only
    to a host `http_to` allows (default a loopback address: a local fake or proxy), since the
    requests carry credentials that must not cross a network in clear."""
    def endpoint(text: str) -> str:
        try:
            url = urllib.parse.urlsplit(text)
            host, port = url.hostname, url.port
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: not a URL ({error})"
                                              ) from None
        if url.scheme not in ("https", "http") or not host:
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: not an https:// URL "
                                              "with a host")
        if url.scheme == "http" and not http_to(host):
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: http only to a loopback "
                                              "address; use https")
        if url.username or url.password or url.query or url.fragment or port == 0:
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: give scheme, host, port "
                                              "and path only")
        return text
    return endpoint


def non_empty(text: str) -> str:
    """An argparse type: a text that is not empty or blank (an empty value would be taken as
    the option not given, silently)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; give a value")
    return text
