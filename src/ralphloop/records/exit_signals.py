"""`.response_analysis` (the last iteration's analysis, every field) and `.exit_signals`
(seed 000's arrays of iteration numbers, bounded), both rewritten atomically per iteration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ralphloop.state.read import read_json_object
from ralphloop.state.store import atomic_write_json

KEEP = 10  # iterations kept per array: enough for the monitor's counts, never growing


@dataclass(slots=True)
class ExitSignals:
    """Which recent iterations gave which evidence (iteration numbers, oldest first)."""

    test_only_loops: list[int] = field(default_factory=list)
    done_signals: list[int] = field(default_factory=list)  # an explicit completion claim
    completion_indicators: list[int] = field(default_factory=list)  # completion phrases in prose
    blocked_loops: list[int] = field(default_factory=list)
    question_loops: list[int] = field(default_factory=list)
    refused_claims: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: str) -> ExitSignals:
        data = read_json_object(path) or {}
        signals = cls()
        for name in ("test_only_loops", "done_signals", "completion_indicators", "blocked_loops", "question_loops"):
            value = data.get(name)
            if isinstance(value, list):
                setattr(signals, name, [item for item in value if isinstance(item, int)][-KEEP:])
        refused = data.get("refused_claims")
        if isinstance(refused, list):
            signals.refused_claims = [item for item in refused if isinstance(item, dict)][-KEEP:]
        return signals

    def record(self, iteration: int, **evidence: bool) -> None:
        """Add `iteration` to each array whose evidence is true (keyword = array name)."""
        for name, present in evidence.items():
            values: list[int] = getattr(self, name)
            if present and iteration not in values:
                values.append(iteration)
                del values[:-KEEP]

    def refuse(self, iteration: int, reason: str, at: str) -> None:
        self.refused_claims.append({"iteration": iteration, "reason": reason, "at": at})
        del self.refused_claims[:-KEEP]

    def save(self, path: str) -> None:
        atomic_write_json(
            path,
            {
                "test_only_loops": self.test_only_loops,
                "done_signals": self.done_signals,
                "completion_indicators": self.completion_indicators,
                "blocked_loops": self.blocked_loops,
                "question_loops": self.question_loops,
                "refused_claims": self.refused_claims,
            },
        )


def write_response_analysis(path: str, iteration: int, at: str, analysis: dict[str, Any], **loop: Any) -> None:
    """The last analysis: every field of `ralph analyze --json`, plus what the loop concluded from it."""
    atomic_write_json(path, {"iteration": iteration, "analyzed_at": at, **analysis, "loop": loop})
