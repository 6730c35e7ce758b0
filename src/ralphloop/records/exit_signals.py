"""`.response_analysis` (the last iteration's analysis, every field) and `.exit_signals`
(seed 000's arrays of iteration numbers, bounded), both rewritten atomically per iteration."""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from ralphloop.files.read import read_json_object
from ralphloop.files.store import atomic_write_json

KEEP = 10  # iterations kept per array: enough for the monitor's counts, never growing


class ExitSignals(Struct):
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
        if any(claim.get("iteration") == iteration for claim in self.refused_claims):
            return  # recorded before ralph was killed
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
            marked=True,
        )


def write_response_analysis(path: str, iteration: int, at: str, analysis: dict[str, Any], **loop: Any) -> None:
    """The last analysis: every field of `ralph analyze --json`, plus what the loop concluded from it."""
    # what `ralph analyze` shows of the last iteration, rewritten at the next: no fsync
    atomic_write_json(
        path, {"iteration": iteration, "analyzed_at": at, **analysis, "loop": loop}, marked=True, sync=False
    )


class SignalRecords:
    """Subscribes to IterationFinished: `.response_analysis` (every field, and what the loop concluded)
    and `.exit_signals` (which recent iterations gave which evidence)."""

    def __init__(self, analysis_path: str, signals_path: str) -> None:
        self.analysis_path = analysis_path
        self.signals_path = signals_path
        self.signals = ExitSignals.load(signals_path)

    def __call__(self, event: object) -> None:
        from ralphloop.core.events import IterationFinished
        from ralphloop.core.protocols import iso

        if not isinstance(event, IterationFinished):
            return
        evidence, at, number = event.evidence, iso(event.finished_at), event.number
        write_response_analysis(
            self.analysis_path,
            number,
            at,
            dict(event.analysis),
            test_only=evidence.get("test_only", False),
            question_only=evidence.get("question_only", False),
            unverified_done=list(evidence.get("unverified_done", [])),
            refused_claim=event.refused_claim,
            decision=event.decision,
            exit_reason=event.exit_reason,
        )
        if event.status != "interrupted":
            self.signals.record(
                number,
                test_only_loops=bool(evidence.get("test_only")),
                done_signals=bool(evidence.get("completion_claimed")),
                completion_indicators=bool(evidence.get("completion_indicators")),
                blocked_loops=bool(evidence.get("blocked")),
                question_loops=bool(evidence.get("question_only")),
            )
        if event.refused_claim:
            self.signals.refuse(number, event.refused_claim, at)
        self.signals.save(self.signals_path)
