"""`ralph analyze N|FILE`: what ralph reads in a saved agent output, and so why it decided what it did.

`N` (or `last`) is an iteration of the feature (`-f`, the only one without it): its `logs/iteration-N.log`.

For a loop's own `logs/iteration-N.log` it also uses the prompt beside it (to drop an echo)
and the iteration's `ralph signal` records, so the analysis is the one the loop made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Iterator

from ralphloop.agents.saved import detect, final_text, readable
from ralphloop.analysis.signals import Analysis, SignalRecord, analyze, with_records
from ralphloop.cli import iteration_logs
from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import LOG_CAP, TASK_CAP, open_regular, read_file, read_tail, shown_path
from ralphloop.plugins.agents import every_spec
from ralphloop.records.signal_log import MAX_READ, parse_line
from ralphloop.words.choices import not_a_choice
from ralphloop.words.textsafe import strip_terminal_controls

CHUNK = 1024 * 1024
_LOG_NAME = re.compile(r"^iteration-(\d+)\.log$")


def command(args: argparse.Namespace, argv: list[str]) -> int:
    path = _path(args.file, args.feature)
    number = _iteration_of(path)
    fmt = _known(args.format) if args.format != "auto" else _agent_format(args.agent) or _auto(_head(path), number)
    text = final_text(_chunks(path), fmt)
    prompt_path = args.prompt or _sibling_prompt(path, number)
    prompt = _read_prompt(prompt_path, explicit=bool(args.prompt))
    records = _records(path, number)
    promise, trust = _completion_settings(path)
    analysis = with_records(analyze(text, prompt, promise, trust=trust), records)
    if args.json:
        body = {"file": path, "format": fmt, "prompt": prompt_path if prompt else None, **analysis.to_json()}
        print(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        print(describe(path, fmt, analysis, len(records)))
    return 0


def _path(word: str, feature: str | None) -> str:
    """The file `N|FILE` names: iteration N's log (or the last one's) in the feature's logs/, else a path. A bare
    number is always an iteration; a file named so is `./7`."""
    if not iteration_logs.is_iteration(word):
        if feature:
            raise RalphError(f"-f {feature}: goes with an iteration number, not with a file ({word})")
        return word
    paths = iteration_logs.feature(feature, ("analyze", word))
    return shown_path(paths.iteration_log(iteration_logs.pick(paths, word, ("analyze", word))))


def _completion_settings(path: str) -> tuple[str | None, bool]:
    """The promise config `completion.promise` names (None: the default) and whether `completion: trust`, in
    the project that holds FILE (else the current folder's): the reply is read as the loop read it."""
    from ralphloop.config.settings import load_settings  # only here: the rest of `ralph analyze` needs no settings
    from ralphloop.project.paths import find_project_root

    loop = load_settings(find_project_root(os.path.dirname(os.path.abspath(path))), {}).loop
    return loop.promise, loop.completion == "trust"


def _open(path: str) -> int:
    if os.path.isdir(path):
        raise RalphError(f"{path}: is a folder, not a saved output")
    fd = open_regular(path, path, cap=LOG_CAP)  # never a FIFO or a device; a huge file is refused, not read
    if fd is None:
        raise RalphError(f"{path}: no such file")
    return fd


def _head(path: str) -> bytes:
    fd = _open(path)
    try:
        return _read(fd, path, 64 * 1024)
    finally:
        os.close(fd)


def _read(fd: int, path: str, size: int) -> bytes:
    try:
        return os.read(fd, size)
    except IsADirectoryError:
        raise RalphError(f"{path}: is a folder, not a saved output") from None
    except OSError as exc:
        raise RalphError(f"{path}: cannot read: {exc.strerror}") from None


def _chunks(path: str) -> Iterator[bytes]:
    fd = _open(path)
    try:
        while chunk := _read(fd, path, CHUNK):
            yield chunk
    finally:
        os.close(fd)


def _known(fmt: str) -> str:
    """--format NAME, when ralph can read it; else a one-line error naming the near miss and every name."""
    names = ["auto", "text", "claude-json", *readable()]
    if fmt in names:
        return fmt
    raise RalphError(not_a_choice("--format", fmt, "not a format ralph reads", names))


def _agent_format(agent: str | None) -> str | None:
    """`--agent NAME`: how that backend's output is read, ralph's own or a plugin's (one without a format of its
    own: as text); None for no name or one no backend has: detected."""
    row = every_spec().get(agent or "")
    if row is None:
        return None
    return row.log_format or "text"


def _auto(head: bytes, number: int | None) -> str:
    """The detected format; for a loop's own log, the way the loop read it: a backend's own output through
    that backend's parser, anything else (Claude's one-object json too) as a command agent's text."""
    fmt = detect(head)
    if number is not None and fmt not in readable():
        return "text"
    return fmt


def _iteration_of(path: str) -> int | None:
    match = _LOG_NAME.match(os.path.basename(path))
    return int(match.group(1)) if match else None


def _sibling_prompt(path: str, number: int | None) -> str | None:
    if number is None:
        return None
    candidate = os.path.join(os.path.dirname(path), f"iteration-{number}.prompt.md")
    return candidate if os.path.lexists(candidate) else None


def _read_prompt(path: str | None, *, explicit: bool) -> str:
    if path is None:
        return ""
    raw = read_file(path, f"--prompt {path}" if explicit else path, cap=TASK_CAP)
    if raw is None and explicit:
        raise RalphError(f"--prompt {path}: no such file")
    return (raw or b"").decode("utf-8", errors="replace")


def _records(path: str, number: int | None) -> list[SignalRecord]:
    """The iteration's `ralph signal` records, when FILE is a loop's iteration log."""
    if number is None:
        return []
    feature_dir = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    signals = os.path.join(feature_dir, "signals.jsonl")
    found = read_tail(signals, shown_path(signals), max_bytes=MAX_READ * 8, start=0, follow=False)
    data = found[0] if found else b""
    records = (parse_line(line) for line in data.split(b"\n") if line.strip())
    return [record for record in records if record is not None and record.iteration == number]


def describe(path: str, fmt: str, analysis: Analysis, record_count: int) -> str:
    """The human-readable report; every text the agent wrote is cleaned of escapes first."""
    data = analysis.to_json()

    def safe(value: object) -> str:
        return strip_terminal_controls(str(value))[:300]

    extras = [fmt]
    if analysis.echo_removed:
        extras.append("an echo of the prompt removed")
    if record_count:
        extras.append(f"{record_count} `ralph signal` record(s)")
    lines = [f"{safe(path)} ({', '.join(extras)})"]
    claim = "yes (" + ", ".join(analysis.claim_sources) + ")" if analysis.completion_claimed else "no"
    lines.append(f"  Completion claimed: {claim}")
    if analysis.block is not None:
        fields = [
            ("STATUS", data["status"]),
            ("EXIT_SIGNAL", data["exit_signal"]),
            ("TESTS_STATUS", data["tests_status"]),
            ("WORK_TYPE", data["work_type"]),
            ("TASKS_COMPLETED_THIS_LOOP", data["tasks_completed"]),
            ("FILES_MODIFIED", data["files_modified"]),
        ]
        shown = " · ".join(f"{name} {safe(value)}" for name, value in fields if value is not None)
        lines.append(f"  Status block: {shown or '(no valid field)'}")
        if data["recommendation"]:
            lines.append(f"  Recommendation: {safe(data['recommendation'])}")
        for problem in analysis.block.invalid:
            lines.append(f"  Invalid field ignored: {safe(problem)}")
    if analysis.done_ids:
        lines.append(f"  DONE: {safe(', '.join(analysis.done_ids))}")
    for failure in analysis.failed:
        lines.append(f"  FAIL {safe(failure.id or '(no id)')}: {safe(failure.reason)}")
    if analysis.legacy:
        lines.append(f"  Legacy tag: [{analysis.legacy.upper()}]")
    for learning in analysis.learnings:
        lines.append(f"  Learning: {safe(learning)}")
    if analysis.json_result is not None:
        summary = f" — {safe(analysis.json_result.summary)}" if analysis.json_result.summary else ""
        lines.append(f"  JSON result: {analysis.json_result.status}{summary}")
    if analysis.json_error:
        lines.append(f"  JSON result ignored: {safe(analysis.json_error)}")
    if analysis.blocked:
        lines.append(f"  Blocked: {safe(analysis.blocked_reason)}")
    if analysis.needs_human:
        lines.append(f"  Needs a human: {safe(analysis.needs_human)}")
    for question in analysis.heuristics.questions:
        lines.append(f"  Question to the user: {safe(question)}")
    if analysis.test_only:
        lines.append("  Test-only work")
    phrases = [*analysis.heuristics.completion_phrases, *analysis.heuristics.nothing_to_do]
    detail = f" (phrases: {', '.join(phrases)})" if phrases else ""
    lines.append(f"  Confidence the agent thinks it is done: {analysis.confidence}/100{detail}")
    lines.append(f"  Signals seen: {', '.join(analysis.signals) or 'none'}")
    if analysis.quotations_ignored:
        lines.append(f"  Quoted signals ignored: {analysis.quotations_ignored}")
    return "\n".join(lines)
