"""ConfigError, the one exception of the schema package, and the limits on what it reports:
a hostile value must not come back whole (a 50 MB string echoed on stderr)."""

from __future__ import annotations

from collections.abc import Sequence

MAX_PROBLEM_CHARS = 500
"""Longest problem line reported; longer ones are cut with an ellipsis."""
MAX_PROBLEMS = 40
"""Most problem lines reported; the rest are counted."""


def shorten(text: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    """`text` cut to at most `limit` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def capped(lines: list[str], what: str = "problem") -> list[str]:
    """`lines` cut to MAX_PROBLEM_CHARS each and to MAX_PROBLEMS in all (then a count)."""
    kept = [shorten(line) for line in lines[:MAX_PROBLEMS]]
    if len(lines) > MAX_PROBLEMS:
        kept.append(f"... and {len(lines) - MAX_PROBLEMS} more {what}(s)")
    return kept


class ConfigError(Exception):
    """A stack file (or value) that cannot be used; `problems` holds one line per problem,
    each at most MAX_PROBLEM_CHARS long, at most MAX_PROBLEMS of them (then a count)."""

    def __init__(self, source: str, problems: list[str]):
        lines = capped(problems)
        super().__init__("\n".join(lines))
        self.source = shorten(source)
        self.problems = lines


def choice_problems(field: str, value: object, allowed: Sequence[object],
                    unit: str = "") -> list[str]:
    """`[]` when `value` is one of `allowed`, else the one line saying so."""
    if value in allowed:
        return []
    return [f"{field}: {value} not allowed; allowed: {', '.join(map(str, allowed))}"
            + (f" ({unit})" if unit else "")]
