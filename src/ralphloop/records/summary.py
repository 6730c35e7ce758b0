"""The totals of ralph_metrics.jsonl lines: counted iterations and the calls that did not count, successes,
durations, tokens by kind, cost, files. Unknown is not zero: what no line reported stays None.

Stdlib only at import (`ralph report` stays as light as `ralph status`)."""

from __future__ import annotations

from dataclasses import dataclass

from ralphloop.records.metrics import UNCOUNTED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any


@dataclass(frozen=True, slots=True)
class Summary:
    """Totals over metrics lines. Token figures cover only the `token_iterations` lines that reported
    tokens, cost figures the `cost_iterations` that reported a cost; None means nothing to report."""

    iterations: int  # counted ones
    max_iterations: int | None
    successes: int  # of the counted ones
    success_rate: float | None  # percent of the counted ones
    duration_total_s: float
    duration_avg_s: float | None
    duration_min_s: float | None
    duration_max_s: float | None
    token_iterations: int
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None  # input + output, as seed 004 counts it
    tokens_avg: float | None
    cache_creation_tokens: int | None
    cache_read_tokens: int | None
    cache_hit_rate: float | None  # percent of prompt tokens read from the cache
    cost_iterations: int
    cost_usd: float | None
    cost_avg_usd: float | None
    files_iterations: int
    files_changed: int | None
    files_avg: float | None
    outcomes: tuple[tuple[str, int], ...]  # (status word, count), most frequent first
    models: tuple[str, ...]  # in the order first seen
    uncounted: int = 0  # agent calls that did not count: usage limit, API retry, wrong model, interrupted
    agents: tuple[tuple[str, int], ...] = ()  # (agent, calls) in order of first use, when more than one ran

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object, rounded for people (0.1 s, 0.1 %, 0.1 token, 1e-6 USD)."""
        return {
            "iterations": self.iterations,
            "calls_not_counted": self.uncounted,
            "max_iterations": self.max_iterations,
            "successes": self.successes,
            "success_rate": _round(self.success_rate, 1),
            "duration_seconds": {
                "total": _round(self.duration_total_s, 1),
                "average": _round(self.duration_avg_s, 1),
                "min": _round(self.duration_min_s, 1),
                "max": _round(self.duration_max_s, 1),
            },
            "tokens": {
                "iterations_reported": self.token_iterations,
                "input": self.input_tokens,
                "output": self.output_tokens,
                "total": self.total_tokens,
                "average": _round(self.tokens_avg, 1),
                "cache_creation": self.cache_creation_tokens,
                "cache_read": self.cache_read_tokens,
                "cache_hit_rate": _round(self.cache_hit_rate, 1),
            },
            "cost_usd": {
                "iterations_reported": self.cost_iterations,
                "total": _round(self.cost_usd, 6),
                "average": _round(self.cost_avg_usd, 6),
            },
            "files_changed": {
                "iterations_reported": self.files_iterations,
                "total": self.files_changed,
                "average": _round(self.files_avg, 1),
            },
            "outcomes": dict(self.outcomes),
            "models": list(self.models),
            "agents": dict(self.agents),
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def cache_hit_rate(input_tokens: int, cache_creation_tokens: int, cache_read_tokens: int) -> float | None:
    """The percentage of prompt tokens served from the cache: read / (input + created + read).

    Not seed 004's read / input: the Anthropic API's `input_tokens` counts only the prompt tokens that
    were neither read from nor written to the cache, so the seed's ratio is not a share and passes
    100% whenever most of the prompt is cached (10,000 read over 2,000 input would be "500%"). The
    three kinds together are the whole prompt. None when there were no prompt tokens.
    """
    prompt = input_tokens + cache_creation_tokens + cache_read_tokens
    return None if prompt <= 0 else 100.0 * cache_read_tokens / prompt


def line_tokens(line: Mapping[str, Any]) -> tuple[int, int, int, int] | None:
    """(input, output, cache created, cache read) when the line reported tokens, else None."""
    usage = line.get("usage")
    if not isinstance(usage, dict):
        return None
    given, made = usage.get("input_tokens"), usage.get("output_tokens")
    if not isinstance(given, int) or not isinstance(made, int):
        return None
    created, read = usage.get("cache_creation_tokens"), usage.get("cache_read_tokens")
    return given, made, created if isinstance(created, int) else 0, read if isinstance(read, int) else 0


def summarize(lines: Iterable[Mapping[str, Any]], *, max_iterations: int | None = None) -> Summary:
    """The totals, averages and rates of `lines` (as `read_metrics` returns them)."""
    iterations = successes = uncounted = 0
    durations: list[float] = []
    token_iterations = given = made = created = read = 0
    cost_iterations, cost = 0, 0.0
    files_iterations = files = 0
    outcomes: dict[str, int] = {}
    models: dict[str, None] = {}
    agents: dict[str, int] = {}
    for line in lines:
        if is_counted(line):
            iterations += 1
            # a line from before `counted` was written: its success meant the agent's run went well, not that a
            # task moved; only a completed task's line is a success by today's meaning
            old = not isinstance(line.get("counted"), bool)
            successes += line.get("success") is True and (not old or line.get("outcome") == "complete")
        else:
            uncounted += 1
        duration = line.get("duration_seconds")
        durations.append(float(duration) if isinstance(duration, (int, float)) else 0.0)
        counted = line_tokens(line)
        if counted is not None:
            token_iterations += 1
            given += counted[0]
            made += counted[1]
            created += counted[2]
            read += counted[3]
        spent = line.get("cost_usd")
        if isinstance(spent, (int, float)) and not isinstance(spent, bool):
            cost_iterations += 1
            cost += spent
        changed = line.get("files_changed")
        if isinstance(changed, int) and not isinstance(changed, bool):
            files_iterations += 1
            files += changed
        word = line.get("outcome")
        word = word if isinstance(word, str) and word else "unknown"
        outcomes[word] = outcomes.get(word, 0) + 1
        model = line.get("model")
        if isinstance(model, str) and model:
            models[model] = None
        agent = line.get("agent")
        if isinstance(agent, str) and agent:
            agents[agent] = agents.get(agent, 0) + 1
    total_s = sum(durations)
    tokens = token_iterations > 0
    return Summary(
        iterations=iterations,
        max_iterations=max_iterations,
        successes=successes,
        success_rate=100.0 * successes / iterations if iterations else None,
        duration_total_s=total_s,
        duration_avg_s=total_s / len(durations) if durations else None,
        duration_min_s=min(durations) if durations else None,
        duration_max_s=max(durations) if durations else None,
        token_iterations=token_iterations,
        input_tokens=given if tokens else None,
        output_tokens=made if tokens else None,
        total_tokens=given + made if tokens else None,
        tokens_avg=(given + made) / token_iterations if tokens else None,
        cache_creation_tokens=created if tokens else None,
        cache_read_tokens=read if tokens else None,
        cache_hit_rate=cache_hit_rate(given, created, read) if tokens else None,
        cost_iterations=cost_iterations,
        cost_usd=cost if cost_iterations else None,
        cost_avg_usd=cost / cost_iterations if cost_iterations else None,
        files_iterations=files_iterations,
        files_changed=files if files_iterations else None,
        files_avg=files / files_iterations if files_iterations else None,
        outcomes=tuple(sorted(outcomes.items(), key=lambda item: (-item[1], item[0]))),
        models=tuple(models),
        uncounted=uncounted,
        agents=tuple(agents.items()) if len(agents) > 1 else (),
    )


def is_counted(line: Mapping[str, Any]) -> bool:
    """Whether a line counts as an iteration; lines from before `counted` was written say it by their outcome."""
    counted = line.get("counted")
    if isinstance(counted, bool):
        return counted
    return line.get("outcome") not in UNCOUNTED
