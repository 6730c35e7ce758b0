"""The iteration's result line carries its numbers (`✓ NOTE-2 passes · 2/6 · 4 files · $0.23 · 3.6k tok (313k
cache) · 10s`); the Iteration Metrics block and the signals are the details `-v` asks for."""

from __future__ import annotations

import io

from ralphloop.cli.render import TerminalRenderer
from ralphloop.core.protocols import TokenUsage
from ralphloop.words.figures import money, short_count, short_tokens
from tests.events import iteration_finished, result


def test_short_counts_stay_short_and_round_to_the_next_unit() -> None:
    assert [short_count(n) for n in (0, 950, 1000, 3600, 9960, 12_345, 313_000, 999_950, 1_250_000, 5 * 10**12)] == [
        "0", "950", "1.0k", "3.6k", "10k", "12k", "313k", "1.0M", "1.2M", "5000G",
    ]  # fmt: skip
    assert short_tokens(3000, 600, 313_000) == "3.6k tok (313k cache)"
    assert short_tokens(None, None, 5) == ""  # nothing reported: nothing said (not "0 tok")
    assert short_tokens(12, None) == "12 tok"
    assert (money(0.234), money(0.0041), money(0.0)) == ("$0.23", "$0.0041", "$0.00")


def _line(verbose: bool, **fields: object) -> str:
    out = io.StringIO()
    TerminalRenderer(out=out, verbose=verbose)(iteration_finished(**fields))
    return out.getvalue()


def test_the_result_line_carries_the_numbers_and_the_block_only_with_verbose() -> None:
    usage = TokenUsage(input_tokens=3000, output_tokens=600, cache_read_tokens=313_000, cache_creation_tokens=0)
    fields = {
        "task_id": "NOTE-2",
        "status": "complete",
        "success": True,
        "done": 2,
        "total": 6,
        "files_changed": ("a", "b", "c", "d"),
        "signals": ("promise",),
        "result": result(duration_s=10.2, cost_usd=0.2312, usage=usage),
    }
    text = _line(False, **fields)
    assert text == "  ✓ NOTE-2 passes · 2/6 · 4 files · $0.23 · 3.6k tok (313k cache) · 10.2s\n"
    detailed = _line(True, **fields)
    assert detailed.startswith(text)
    assert "signals: promise" in detailed and "--- Iteration Metrics ---" in detailed


def test_an_agent_that_reports_no_tokens_or_cost_gets_no_zeros() -> None:
    text = _line(False, result=result(duration_s=0.4))
    assert text == "  · S-1 still open · 0/1 · 0.4s\n"


def test_a_failed_agent_is_told_once_by_its_note() -> None:
    why = "exit code 1: Error: ENOSPC: no space left on device"
    text = _line(
        False,
        status="failed",
        failure=why,
        notes=(f"agent failed: {why}",),
        result=result(duration_s=0.4, failed=True, exit_code=1),
    )
    assert text == f"  ✗ agent failed · 0/1 · 0.4s\n    ⚠ agent failed: {why}\n"
