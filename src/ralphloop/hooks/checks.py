"""What the post_iteration hooks and the quality gates make of one iteration (the engine's verify phase)."""

from __future__ import annotations

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.hooks.gates import GateVerdict
from ralphloop.hooks.runner import HookContext, HookRunner


class Checks(Struct, frozen=True):
    """The verdict of an iteration's checks: () failures when none are configured or all pass."""

    claimed: bool = False  # the iteration says something is done: the gates ran
    gates: GateVerdict = field(default_factory=GateVerdict)
    verify_failed: tuple[str, ...] = ()  # post_iteration hooks that exited 75
    notes: tuple[str, ...] = ()  # for progress.txt
    prompt_notes: tuple[str, ...] = ()  # for the next prompt

    @property
    def failures(self) -> tuple[str, ...]:
        """Failed gates and refused verifications: a claim they concern does not stand."""
        return self.gates.failures + self.verify_failed


def check_iteration(
    runner: HookRunner, context: HookContext, *, ran_clean: bool, claimed: bool, all_done: bool, root: str
) -> Checks:
    """post_iteration hooks, then the quality gates when the iteration claims something is done. After an agent
    that did not run clean (or a task file it broke) only the gates run, and only when every task looks done:
    a completion the gates must confirm, whoever made it."""
    if not ran_clean:
        return _gated(runner, Checks(claimed=True), context, root) if all_done and runner.gates else Checks()
    runs = runner.lifecycle("post_iteration", context)
    refused = [hook for hook in runs if hook.verify_failed]
    tails = ["\n".join(hook.tail.splitlines()[-10:]) for hook in refused]
    checks = Checks(
        claimed=claimed,
        verify_failed=tuple(f"post_iteration hook {hook.name}" for hook in refused),
        notes=tuple(f"verification failed: {hook.summary()}; the iteration is not progress" for hook in refused),
        prompt_notes=tuple(
            "the post_iteration check failed (verification failed)" + (f":\n{tail}" if tail else "") for tail in tails
        ),
    )
    return _gated(runner, checks, context, root) if claimed and runner.gates else checks


def _gated(runner: HookRunner, checks: Checks, context: HookContext, root: str) -> Checks:
    """The quality gates run; what fails goes to the iteration's log, progress.txt and the next prompt."""
    verdict = runner.run_gates(context)
    report = verdict.report(root)
    if report:
        try:
            with open(context.transcript, "a", encoding="utf-8") as handle:
                handle.write("\n[ralph: " + "\n\n".join(report) + "]\n")
        except OSError:
            pass  # the same text is in progress.txt and the next prompt
    return replace(
        checks,
        gates=verdict,
        notes=(*checks.notes, *verdict.summaries(root)),
        prompt_notes=(*checks.prompt_notes, *report),
    )


def confirm_done(runner: HookRunner, context: HookContext, root: str) -> tuple[str, ...]:
    """Every task passes before any iteration: the quality gates confirm it, or say why not (one note per
    failing gate, told as a warning). Returns the gates that fail."""
    verdict = runner.run_gates(context)
    for note in verdict.report(root):
        runner.tell(note, False)
    return verdict.failures
