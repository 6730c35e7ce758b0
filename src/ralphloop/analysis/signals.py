"""Every signal protocol, read from the agent's own final text: a pure function, no I/O.

Protocols (docs/analysis.md has the full rules):
- `<promise>COMPLETE</promise>` (seed 003), or the promise config `completion.promise` names instead
- the RALPH_STATUS block, last one wins (seed 000; status_block.py)
- `<ralph>DONE id</ralph>`, `<ralph>FAIL id: reason</ralph>`, `<ralph>LEARN: text</ralph>`, and the
  legacy `[DONE]` / `[FAIL]` when no `<ralph>` DONE or FAIL tag is present (seed 002)
- the fenced ```json result (seed 001; json_result.py), last valid one wins
- `ralph signal ...` records from signals.jsonl, merged by `with_records` (no prose parsing at all)
- prose heuristics for a confidence score that informs and never decides (heuristics.py)

A signal in inline code, in a fenced block other than the JSON result, or in an echo of the prompt is a quotation.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.analysis.heuristics import Heuristics, confidence, read_prose
from ralphloop.analysis.json_result import JsonResult, parse_result
from ralphloop.analysis.promise import promise_pattern
from ralphloop.analysis.status_block import StatusBlock, last_block, only_a_block
from ralphloop.analysis.text import OwnText, own_text
from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import clean_text

MAX_TAGS = 200  # per kind; a hostile reply cannot grow the analysis without bound
MAX_TAG_TEXT = 2000
MAX_CHECKS = 4 * MAX_TAGS  # candidates per protocol checked for quotation, newest first
# Seed 000 (UC-2 6a): under `completion: trust`, a reply this confident is a completion claim.
TRUST_CONFIDENCE = 40

# A <ralph> tag's body stops at the next <ralph> or </ralph>: linear even for a reply full of opening tags.
# The literal `<ralph>` prefix keeps the scan fast; the keyword is matched in any case. One
# pattern per kind, so that many tags of one kind cannot crowd out the others.
_RALPH_TAGS = tuple(
    re.compile(rf"<ralph>[ \t]*(?P<kind>(?i:{kind}))\b(?P<body>(?:[^<]|<(?!/?ralph>)){{0,{MAX_TAG_TEXT}}})</ralph>")
    for kind in ("DONE", "FAIL", "LEARN")
)
_LEGACY = lazy(r"\[(?P<kind>DONE|FAIL)\]")
_TAG_ID = lazy(r"^[ \t:]*(?P<id>[\w][\w.\-/#]*)")


class Failure(Struct, frozen=True):
    id: str
    reason: str


class Analysis(Struct, frozen=True):
    """What one reply said, typed. `signals` names the protocols seen, in the order listed above."""

    promise: bool = False
    block: StatusBlock | None = None
    done_ids: tuple[str, ...] = ()
    failed: tuple[Failure, ...] = ()
    learnings: tuple[str, ...] = ()
    legacy: str | None = None  # "done" or "fail": the last bare [DONE]/[FAIL] when no <ralph> tag says it
    json_result: JsonResult | None = None
    json_error: str | None = None
    signal_complete: bool = False
    signal_blocked: str | None = None
    heuristics: Heuristics = field(default_factory=lambda: Heuristics((), (), (), False))
    signals: tuple[str, ...] = ()
    echo_removed: bool = False
    quotations_ignored: int = 0
    trusted_prose: bool = False  # `completion: trust`, no explicit claim, a confidence of TRUST_CONFIDENCE+

    # -------------------------------------------------------------- derived facts

    @property
    def exit_signal(self) -> bool | None:
        return self.block.exit_signal if self.block else None

    @property
    def status(self) -> str | None:
        return self.block.status if self.block else None

    @property
    def json_status(self) -> str | None:
        return self.json_result.status if self.json_result else None

    @property
    def explicit_claim(self) -> bool:
        """An explicit claim: the promise, EXIT_SIGNAL: true, STATUS: COMPLETE (unless EXIT_SIGNAL: false
        says otherwise), `ralph signal complete`, or a goal-complete JSON result."""
        block_claims = self.exit_signal is True or (self.status == "COMPLETE" and self.exit_signal is not False)
        return self.promise or block_claims or self.signal_complete or self.json_status == "goal-complete"

    @property
    def completion_claimed(self) -> bool:
        """An explicit claim, or (`completion: trust`) confident prose, seed 000's rule, unless BLOCKED is said."""
        return self.explicit_claim or (self.trusted_prose and not self.blocked)

    @property
    def claim_sources(self) -> tuple[str, ...]:
        named = {
            f"confidence {self.confidence} ≥ {TRUST_CONFIDENCE}": self.trusted_prose and not self.blocked,
            "promise": self.promise,
            "EXIT_SIGNAL: true": self.exit_signal is True,
            "STATUS: COMPLETE": self.status == "COMPLETE" and self.exit_signal is None,
            "ralph signal complete": self.signal_complete,
            "JSON goal-complete": self.json_status == "goal-complete",
        }
        return tuple(name for name, given in named.items() if given)

    @property
    def blocked(self) -> bool:
        return self.signal_blocked is not None or self.status == "BLOCKED"

    @property
    def blocked_reason(self) -> str:
        if self.signal_blocked:
            return self.signal_blocked
        if self.block and self.block.recommendation:
            return self.block.recommendation
        return "the agent reported STATUS: BLOCKED without a reason"

    @property
    def needs_human(self) -> str | None:
        """The agent's reason when its JSON result asks for a human, else None."""
        result = self.json_result
        if result is None or result.status != "needs-human":
            return None
        reason = result.human_reason or result.summary or "no reason given"
        return f"{reason} ({result.human_details})" if result.human_details else reason

    @property
    def not_done(self) -> bool:
        return (
            self.exit_signal is False
            or self.status in ("IN_PROGRESS", "BLOCKED")
            or self.json_status in ("continue", "needs-human")
        )

    @property
    def confidence(self) -> int:
        return confidence(
            self.heuristics,
            claimed=self.explicit_claim,
            not_done=self.not_done,
            tests_passing=self.block is not None and self.block.tests_status == "PASSING",
        )

    @property
    def asking_questions(self) -> bool:
        return self.heuristics.asking_questions

    @property
    def test_only(self) -> bool:
        """The reply describes only running tests (WORK_TYPE: TESTING, or test runs and no building words)."""
        if self.block and self.block.work_type:
            return self.block.work_type == "TESTING"
        return self.heuristics.testing_only

    def to_json(self) -> dict[str, object]:
        """The `ralph analyze --json` and `.response_analysis` shape."""
        block = self.block
        result = self.json_result
        return {
            "completion_claimed": self.completion_claimed,
            "claim_sources": list(self.claim_sources),
            "promise": self.promise,
            "exit_signal": self.exit_signal,
            "status": self.status,
            "tasks_completed": block.tasks_completed if block else None,
            "files_modified": block.files_modified if block else None,
            "tests_status": block.tests_status if block else None,
            "work_type": block.work_type if block else None,
            "recommendation": block.recommendation if block else None,
            "status_block_invalid": list(block.invalid) if block else [],
            "done_ids": list(self.done_ids),
            "failed": [{"id": failure.id, "reason": failure.reason} for failure in self.failed],
            "learnings": list(self.learnings),
            "legacy": self.legacy,
            "json_status": self.json_status,
            "json_summary": result.summary if result else None,
            "completed_step_ids": list(result.completed_step_ids) if result else [],
            "pending_steps": [{"id": step.id, "prompt": step.prompt} for step in result.pending_steps]
            if result
            else [],
            "goal_complete_summary": result.goal_complete_summary if result else None,
            "human_needed": {"reason": result.human_reason, "details": result.human_details}
            if result and result.status == "needs-human"
            else None,
            "json_error": self.json_error,
            "blocked": self.blocked,
            "blocked_reason": self.blocked_reason if self.blocked else None,
            "confidence": self.confidence,
            "completion_phrases": list(self.heuristics.completion_phrases),
            "nothing_to_do": list(self.heuristics.nothing_to_do),
            "asking_questions": self.asking_questions,
            "questions": list(self.heuristics.questions),
            "test_only": self.test_only,
            "signals": list(self.signals),
            "echo_removed": self.echo_removed,
            "quotations_ignored": self.quotations_ignored,
        }


def analyze(final_text: str, prompt: str = "", promise: str | None = None, *, trust: bool = False) -> Analysis:
    """Read every protocol from the agent's final text (`prompt`: what it was sent, to drop an echo;
    `promise`: the configured promise text, None for the default; `trust`: `completion: trust`, where
    a confidence of TRUST_CONFIDENCE or more is a claim, as in seed 000)."""
    pattern = promise_pattern(promise)
    own = own_text(final_text, prompt, marks=(promise,) if promise else ())
    prose = own.prose
    quoted = 0
    said = False
    legacy: str | None = None
    # Newest first, a bounded number of candidates each: a reply full of quoted tags stays cheap.
    for match in _newest(pattern, prose, MAX_CHECKS):
        if own.quoted(match.start(), match.end()):
            quoted += 1
        else:
            said = True
    for match in _newest(_LEGACY.compiled, prose, MAX_CHECKS):
        if own.quoted(match.start(), match.end()):
            quoted += 1
        elif legacy is None:
            legacy = match.group("kind").lower()
    tags, skipped = _tags(own)
    quoted += skipped

    block = _status_block(own)
    result, json_error, json_blocks = _json_result(own)
    quoted += sum(_quoted_in_fences(own, pattern))
    done_ids, failed, learnings = _sort_tags(tags)
    if done_ids or failed:
        legacy = None  # seed 002: the bare form is a fallback for replies without <ralph> tags
    heuristics = read_prose(prose)
    signals = _seen(
        promise=said,
        block=block is not None,
        tags=bool(tags),
        legacy=legacy is not None,
        json=result is not None or json_blocks > 0,
        keywords=bool(heuristics.completion_phrases or heuristics.nothing_to_do),
    )
    analysis = Analysis(
        promise=said,
        block=block,
        done_ids=done_ids,
        failed=failed,
        learnings=learnings,
        legacy=legacy,
        json_result=result,
        json_error=json_error,
        heuristics=heuristics,
        signals=signals,
        echo_removed=own.echo_removed,
        quotations_ignored=quoted,
    )
    confident = not analysis.explicit_claim and analysis.confidence >= TRUST_CONFIDENCE
    return replace(analysis, trusted_prose=trust and confident)


def _newest(pattern: re.Pattern[str], text: str, limit: int) -> list[re.Match[str]]:
    """The last `limit` matches, newest first (the deque consumes the scan at C speed)."""
    return list(reversed(deque(pattern.finditer(text), maxlen=limit)))


def _tags(own: OwnText) -> tuple[list[tuple[str, str]], int]:
    """Every kind's newest MAX_CHECKS tags, in the order they appear."""
    found: list[tuple[int, str, str]] = []
    quoted = 0
    for pattern in _RALPH_TAGS:
        for match in _newest(pattern, own.prose, MAX_CHECKS):
            if own.quoted(match.start(), match.end()):
                quoted += 1
            else:
                found.append((match.start(), match.group("kind").upper(), match.group("body")))
    return [(kind, body) for _, kind, body in sorted(found)], quoted


def _quoted_in_fences(own: OwnText, promise: re.Pattern[str]) -> list[int]:
    """Signals inside fenced blocks (the JSON result's included): quotations, counted."""
    patterns = (promise, _LEGACY.compiled, *_RALPH_TAGS)
    return [
        min(len(pattern.findall(segment.text)), MAX_CHECKS)
        for segment in own.fenced[-MAX_TAGS:]
        for pattern in patterns
    ]


def _sort_tags(tags: Iterable[tuple[str, str]]) -> tuple[tuple[str, ...], tuple[Failure, ...], tuple[str, ...]]:
    done: list[str] = []
    failed: list[Failure] = []
    learnings: list[str] = []
    for kind, body in tags:
        text = clean_text(body)
        if kind == "LEARN":
            learning = text.lstrip(":").strip()
            if learning and len(learnings) < MAX_TAGS:
                learnings.append(learning)
            continue
        match = None if text.startswith(":") else _TAG_ID.match(text)  # `FAIL: reason` names no id
        tag_id = match.group("id").rstrip(".:") if match else ""
        if kind == "DONE" and tag_id and tag_id not in done and len(done) < MAX_TAGS:
            done.append(tag_id)
        elif kind == "FAIL" and len(failed) < MAX_TAGS:
            reason = text[match.end() :].lstrip(" :-").strip() if match else text.lstrip(" :-").strip()
            failed.append(Failure(tag_id, reason or "no reason given"))
    return tuple(done), tuple(failed), tuple(learnings)


def _status_block(own: OwnText) -> StatusBlock | None:
    """The last block in the reply: in prose, or a fenced block that holds only the status block
    (agents often fence it). A fenced block that quotes one among other text is a quotation, and
    a block copied from the prompt is its example."""
    candidates: list[tuple[int, StatusBlock]] = []
    in_prose = last_block(own.prose, skip=own.copied_from_prompt)
    if in_prose is not None:
        candidates.append((own.position(in_prose[0]), in_prose[1]))
    for segment in reversed(own.fenced):
        found = last_block(segment.text)
        if found is not None and only_a_block(segment.text) and not own.copied_from_prompt(segment.text):
            candidates.append((segment.position + found[0], found[1]))
            break
    if not candidates:
        return None
    return max(candidates, key=lambda candidate: candidate[0])[1]


def _json_result(own: OwnText) -> tuple[JsonResult | None, str | None, int]:
    result: JsonResult | None = None
    error: str | None = None
    seen = 0
    for segment in own.fenced:
        if segment.info.split(" ", 1)[0] != "json":
            continue
        parsed, problem = parse_result(segment.text)
        if parsed is not None:
            result, error, seen = parsed, None, seen + 1
        elif problem is not None:
            error, seen = problem, seen + 1
    return result, error, seen


def _seen(**present: bool) -> tuple[str, ...]:
    names = {"block": "status_block", "tags": "ralph_tags", "legacy": "legacy_tags", "json": "json_result"}
    return tuple(names.get(key, key) for key, seen in present.items() if seen)


# ------------------------------------------------------------------ `ralph signal` records


class SignalRecord(Struct, frozen=True):
    """One line of signals.jsonl, as `ralph signal` wrote it."""

    kind: str  # complete | blocked | fail | done | learn
    iteration: int | None = None
    id: str = ""
    text: str = ""


def with_records(analysis: Analysis, records: Iterable[SignalRecord]) -> Analysis:
    """The analysis with `ralph signal` records of the same iteration counted like tags."""
    done = list(analysis.done_ids)
    failed = list(analysis.failed)
    learnings = list(analysis.learnings)
    complete = analysis.signal_complete
    blocked = analysis.signal_blocked
    records = list(records)
    for record in records:
        if record.kind == "complete":
            complete = True
        elif record.kind == "blocked":
            blocked = record.text or "blocked (no reason given)"
        elif record.kind == "done" and record.id and record.id not in done:
            done.append(record.id)
        elif record.kind == "fail":
            failed.append(Failure(record.id, record.text or "no reason given"))
        elif record.kind == "learn" and record.text:
            learnings.append(record.text)
    if not records:
        return analysis
    legacy = None if done or failed else analysis.legacy
    signals = tuple(name for name in analysis.signals if name != "legacy_tags" or legacy is not None)
    if "signal_file" not in signals:
        signals = (*signals, "signal_file")
    return replace(
        analysis,
        done_ids=tuple(done[:MAX_TAGS]),
        failed=tuple(failed[:MAX_TAGS]),
        learnings=tuple(learnings[:MAX_TAGS]),
        signal_complete=complete,
        signal_blocked=blocked,
        legacy=legacy,
        signals=signals,
    )


def claims_complete(final_text: str, prompt: str = "", promise: str | None = None) -> bool:
    """Whether the agent's own text makes an explicit completion claim."""
    return analyze(final_text, prompt, promise).completion_claimed
