"""A preflight result: one line per finding, with the stack field it concerns."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Level = Literal["error", "warning", "ok"]
LEVELS: tuple[Level, ...] = ("error", "warning", "ok")


@dataclass(frozen=True)
class Result:
    """What one check found about one thing the stack asks for."""

    check: str
    level: Level
    """error: `pulumi up` would fail; warning: it might, or the stack would not work fully;
    ok: checked and fine."""
    path: str
    """The stack field (gpu-infra:cluster.<field path>) or planned resource concerned."""
    message: str

    def line(self) -> str:
        """`ERROR   [stock] path: message`."""
        return f"{self.level.upper():<8}[{self.check}] {self.path}: {self.message}"

    def to_json(self) -> dict[str, str]:
        """The result as a JSON object."""
        return asdict(self)
