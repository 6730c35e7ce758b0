"""Prose heuristics: how sure are we that the agent thinks it is done, and did it only ask or only test?

These inform (status.json, progress.txt, `ralph analyze`, the circuit breaker) and, under the default
`completion: verify`, never end a loop on their own: seed 000 let a confidence of 40 exit the loop, which
is how a reply such as "the feature is complete except for the tests" ended runs early. `completion: trust`
restores that rule (signals.TRUST_CONFIDENCE).

Confidence (0–100), documented in docs/analysis.md:

| evidence                                                              | points          |
|-----------------------------------------------------------------------|-----------------|
| an explicit claim (promise, EXIT_SIGNAL: true, STATUS: COMPLETE,      | 100             |
| `ralph signal complete`, JSON goal-complete)                          |                 |
| each distinct completion phrase ("all tasks are complete")            | +10, at most 30 |
| each distinct "nothing to do" phrase ("nothing left to do")           | +15, at most 30 |
| TESTS_STATUS: PASSING with no explicit claim                          | +10             |
| an explicit "not done" (EXIT_SIGNAL: false, STATUS IN_PROGRESS or     | capped at 20    |
| BLOCKED, JSON continue or needs-human)                                |                 |
| questions to the user                                                 | capped at 20    |

Only the reply's last HEURISTIC_CHARS of prose are read: the conclusion is at the end, and
a huge reply must not make this slow.
"""

from __future__ import annotations

import re

from msgspec import Struct

from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import clean_text

HEURISTIC_CHARS = 16 * 1024

_COMPLETION = (
    (
        "all tasks complete",
        r"\ball (?:the )?(?:tasks|stories|items|work)(?: (?:are|is|have been))? (?:now )?"
        r"(?:complete|completed|done|finished)\b",
    ),
    (
        "project complete",
        r"\b(?:project|feature|implementation|work) is (?:now )?(?:fully )?(?:complete|completed|done|finished)\b",
    ),
    ("all stories pass", r"\ball (?:the )?(?:user )?stories (?:now )?pass\b"),
    ("everything is done", r"\beverything (?:is|has been) (?:now )?(?:done|complete|completed|implemented)\b"),
    ("ready for review", r"\b(?:ready for (?:review|merge|production)|ready to (?:ship|merge))\b"),
    ("finished", r"\b(?:i have|i've) (?:finished|completed) (?:all|every)\b"),
)
_NOTHING_TO_DO = (
    ("nothing to do", r"\bnothing (?:left |more |else )?(?:to do|to implement|to change|to fix|remaining)\b"),
    ("no remaining tasks", r"\bno (?:remaining|open|pending|more) (?:tasks|stories|work|items)\b"),
    ("already implemented", r"\b(?:already|previously) (?:been )?(?:implemented|complete|completed|done|passing)\b"),
    ("no changes needed", r"\bno (?:further )?changes (?:are )?(?:needed|required|necessary)\b"),
)
# A question to the user: an ask addressed to "you", or a request for a decision.
_QUESTION = lazy(
    r"(?:^|(?<=[.!?:]\s))(?P<q>[^.!?\n]{0,300}\b(?:you|your|should i|shall i|do i|can i|may i|which|prefer|"
    r"confirm|let me know|would it)\b[^.!?\n]{0,300}\?)",
    re.IGNORECASE | re.MULTILINE,
)
# An ask without a question mark, and a wait for the user's word ("Awaiting your input on the design.").
# Only a wait for *your* decision-like word: "Waiting for tests to finish" and "awaiting CI" are status.
_ASK = lazy(
    r"\b(?:let me know (?:if|whether|which|how)|please (?:confirm|advise|clarify|let me know)|"
    r"(?:await(?:ing|s)?|wait(?:ing)? (?:for|on)) your (?:input|decision|confirmation|approval|feedback|answer|"
    r"response|reply|guidance|go-ahead|direction|instructions|call|choice|preference)s?)\b[^.!?\n]{0,300}[.!?]?",
    re.IGNORECASE,
)
_TESTING = lazy(
    r"\b(?:ran|run|running|re-ran|executed|execute) (?:the |all |all the )?(?:unit |integration |e2e )?"
    r"(?:tests?|test suite|specs?)\b|\b(?:pytest|npm test|npm run test|cargo test|go test|bats|jest|vitest)\b",
    re.IGNORECASE,
)
_BUILDING = lazy(
    r"\b(?:implement(?:ed|ing)?|add(?:ed|ing)?|creat(?:ed|ing)|wr(?:ote|iting)|fix(?:ed|ing)?|refactor(?:ed|ing)?|"
    r"chang(?:ed|ing)|updat(?:ed|ing)|modif(?:ied|ying)|edit(?:ed|ing)?)\b",
    re.IGNORECASE,
)
_COMPILED_COMPLETION = tuple((label, lazy(pattern, re.IGNORECASE)) for label, pattern in _COMPLETION)
_COMPILED_NOTHING = tuple((label, lazy(pattern, re.IGNORECASE)) for label, pattern in _NOTHING_TO_DO)


class Heuristics(Struct, frozen=True):
    completion_phrases: tuple[str, ...]
    nothing_to_do: tuple[str, ...]
    questions: tuple[str, ...]
    testing_only: bool

    @property
    def asking_questions(self) -> bool:
        return bool(self.questions)


def read_prose(prose: str) -> Heuristics:
    """What the tail of the agent's prose suggests."""
    tail = prose[-HEURISTIC_CHARS:]
    completion = tuple(label for label, pattern in _COMPILED_COMPLETION if pattern.search(tail))
    nothing = tuple(label for label, pattern in _COMPILED_NOTHING if pattern.search(tail))
    found = [(match.start("q"), match.group("q").strip()) for match in _QUESTION.finditer(tail)]
    found += [(match.start(), match.group(0).strip()) for match in _ASK.finditer(tail)]
    questions = [clean_text(text) for _, text in sorted(found)]
    testing_only = bool(_TESTING.search(tail)) and not _BUILDING.search(tail)
    return Heuristics(completion, nothing, tuple(question[:200] for question in questions[-5:]), testing_only)


def confidence(heuristics: Heuristics, *, claimed: bool, not_done: bool, tests_passing: bool) -> int:
    """The documented score above, 0–100."""
    if claimed:
        return 100
    score = min(30, 10 * len(heuristics.completion_phrases)) + min(30, 15 * len(heuristics.nothing_to_do))
    if tests_passing:
        score += 10
    if not_done or heuristics.asking_questions:
        score = min(score, 20)
    return max(0, min(100, score))
