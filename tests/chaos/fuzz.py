"""The fuzz part of the chaos suite (issue 20): seeded random damage to the task, config and state files ralph
reads, then every command that reads them, judged as a user would judge them.

Each case copies a project with one workspace of every task format (tests/integration/hostile_project.py),
picks one file (a task file, a config file, a state or runtime file, the rate-limit call ledger) and one
mutation of its content: byte-level (flips, inserts, deletions, truncation, a duplicated chunk, invalid
UTF-8, a NUL, a BOM, CR/LF mixes, terminal escapes, a 1-5 MB line), structure-aware for JSON, JSON lines
and YAML (a node at any depth replaced by a value of another type, a key deleted, added or given twice),
hostile values of known settings in a config file (YAML specials, tags, recursive aliases, an alias bomb)
and Markdown checklists (checkbox variants, a hundred thousand boxes, hostile titles). Then `validate`,
`status`, `status --json`, `report` and `run -n 1` run on the file's workspace, each with a timeout.

test_hostile_files.py tries fixed kinds of file (FIFOs, devices, NUL, surrogates) per file and command;
this is its randomized, content-level complement. Counted, by the classes of classes.py: a command that
hangs (HANG); a traceback, "internal error", an exit code other than 0 or 1, or a refusal that is not one
`ralph: error:` line after any `ralph: warning:` lines (TRACEBACK); a terminal control on any screen
(ESCAPE); a view that changed a file, a refusal that changed a file or took a rate-limit slot
(CHANGED_ON_REJECT); a run that left its status.json or state.json unreadable (CORRUPT_STATE).

Every case draws from `random.Random(f"{seed}/{index}")`: `run_fuzz(1, seed, ..., start=index)` replays one.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from ralphloop.config.settings import _FIELDS  # every setting: its YAML path, converter and default
from ralphloop.core.hook_spec import LIFECYCLE_EVENTS
from tests.chaos.classes import CHANGED_ON_REJECT, CORRUPT_STATE, HANG, TRACEBACK, Findings, check_screen
from tests.integration.hostile_project import FEATURES, SAY, copy_case, env_of, make_template, tree
from tests.integration.test_hostile_files import TARGETS, TIMEOUT
from tests.warm_ralph import WarmRalph

TASKS = ("prd.json", "TODO.md", "fix_plan.md", "PROMPT.md", "story-spec", "SPRINT.yaml", "PROGRESS.yaml")
CONFIGS = ("config", "user-config")
STATES = ("status.json", "state.json", "breaker", "metrics", "events", "signals", "exit-signals", "progress.txt")
NAMES = (*TASKS, *CONFIGS, *STATES, "call-ledger")
VIEWS = (("validate",), ("status",), ("status", "--json"), ("report",))
RUN = ("run", "-n", "1", "--agent-cmd", SAY)
KEEP = 10  # case folders kept for a look when they found something

# ---------------------------------------------------------------- hostile values


class Raw(NamedTuple):
    """A value no serializer writes: put into the file as this text, in place of a placeholder."""

    json: str
    yaml: str


DEEP = 10_000
ESCAPES = "t\x1b[2J\x1b]52;c;aGVsbG8=\x07\x9b31m\x1b[31mred\rback\x08\x7f"
VALUES: tuple[tuple[str, object], ...] = (
    ("null", None),
    ("true", True),
    ("false", False),
    ("10**30", 10**30),
    ("-1", -1),
    ("0", 0),
    ("1e308", 1e308),
    ('""', ""),
    ("a 100 KB string", "x" * 100_000),
    ("terminal escapes", ESCAPES),
    ("a NUL", "a\x00b"),
    ("a lone surrogate", "a\ud800b"),
    ("{}", {}),
    ("[]", []),
    ("NaN", Raw("NaN", ".nan")),
    ("Infinity", Raw("Infinity", ".inf")),
    ("-Infinity", Raw("-Infinity", "-.inf")),
    ("1e999", Raw("1e999", "1.0e+999")),
    ("5000 digits", Raw("9" * 5000, "9" * 5000)),
    (f"a list {DEEP} deep", Raw("[" * DEEP + "]" * DEEP, "[" * DEEP + "]" * DEEP)),
    ("year 9999 at -14:00", "9999-12-31T23:59:59-14:00"),
    ("year 1 at +14:00", "0001-01-01T00:00:00+14:00"),
    ("February 30", "2026-02-30T00:00:00Z"),
    ("a time without zone", "2026-11-27T08:53:28"),
)


def _bomb(levels: int = 9, width: int = 9) -> str:
    """Billion laughs: each level a list of `width` aliases of the level below, 9**9 strings in all."""
    parts = ["&b0 [" + ", ".join(["lol"] * width) + "]"]
    parts += [f"&b{n} [" + ", ".join([f"*b{n - 1}"] * width) + "]" for n in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


YAML_SPECIALS = (
    *(".nan", ".inf", "-.inf", "1e26", "1.0e+26", "0x10", "0o17", "017", "0b101", "yes", "no", "on", "off", "~"),
    "12:30:00",
    "2001-12-14",
    "!!binary aGVsbG8=",
    "!!set {a: null}",
    "!!omap [a: 1]",
    "!!float nope",
    "!!int nope",
    "!!timestamp nope",
    "!!python/object/apply:os.system [echo]",
    "!!python/name:os.system",
    "!custom x",
    "&x [*x]",
    "&x {k: *x}",
    "*undefined",
    '"\\e[2J\\e]52;c;aGk=\\a\\x9b"',
    '"\\0"',
    '"\\uD800"',
    "true",  # as a hook, a command that succeeds
    "exit 3",
    _bomb(),
)

# ---------------------------------------------------------------- mutations: bytes


def _insert(rng: random.Random, data: bytes, piece: bytes) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + piece + data[at:]


def _flip(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] ^= rng.randint(1, 255)
    return bytes(buf)


def _delete(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + data[at + rng.randint(1, 16) :]


def _duplicate(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    return _insert(rng, data, data[at : at + rng.randint(1, 200)])


def _newlines(rng: random.Random, data: bytes) -> bytes:
    ends = (b"\r\n", b"\r", b"\n\r", b"\r\r\n")
    return b"".join(part + (rng.choice(ends) if rng.random() < 0.5 else b"\n") for part in data.split(b"\n"))


def _long_line(rng: random.Random, data: bytes) -> bytes:
    at = rng.choice([0, len(data), *(n + 1 for n, byte in enumerate(data) if byte == 10)])
    return data[:at] + b"A" * rng.randint(1 << 20, 5 << 20) + b"\n" + data[at:]


BYTES: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "bytes flipped": _flip,
    "random bytes inserted": lambda rng, data: _insert(rng, data, rng.randbytes(rng.randint(1, 16))),
    "bytes deleted": _delete,
    "truncated": lambda rng, data: data[: rng.randrange(len(data))],
    "a chunk duplicated": _duplicate,
    "invalid UTF-8": lambda rng, data: _insert(rng, data, rng.choice([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x80"])),
    "a NUL": lambda rng, data: _insert(rng, data, b"\x00"),
    "a BOM": lambda rng, data: rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xef\xbb\xbf\xef\xbb\xbf"]) + data,
    "CR/LF mixed": _newlines,
    "terminal escapes": lambda rng, data: _insert(
        rng, data, rng.choice([b"\x1b[2J", b"\x1b]52;c;aGVsbG8=\x07", b"\x9b31m", b"\xc2\x9b31m", b"\x1b[31m\r"])
    ),
    "a 1-5 MB line": _long_line,
}

# ---------------------------------------------------------------- mutations: JSON and YAML trees

_RAW, _DUP = "FUZZRAWPLACEHOLDER", "FUZZDUPPLACEHOLDER"


def _nodes(doc: Any) -> list[tuple[Any, ...]]:
    """The path of every node of a parsed (pristine, shallow) document, the root's `()` first."""
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        path, value = stack.pop()
        found.append(path)
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend(((*path, key), item) for key, item in items)
    return found


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _at(doc, path[:-1])[path[-1]] = value
    return doc


def _tree_edit(rng: random.Random, doc: Any) -> tuple[Any, str, Raw | None, str | None]:
    """(the document, what was done, the raw text for the placeholder, the key the duplicate stands for)."""
    paths = _nodes(doc)
    dicts = [path for path in paths if isinstance(_at(doc, path), dict)]
    label, value = rng.choice(VALUES)
    raw = value if isinstance(value, Raw) else None
    value = _RAW if raw else value
    kind = rng.choice(("replace", "replace", "delete", "add", "duplicate"))
    where = rng.choice(paths)
    shown = "".join(f"[{key!r}]" for key in where) or "the root"
    if kind == "delete" and where:
        parent = _at(doc, where[:-1])
        del parent[where[-1]]
        return doc, f"{shown} deleted", None, None
    if kind in ("add", "duplicate") and dicts:
        node = _at(doc, rng.choice(dicts))
        key = rng.choice(sorted(node)) if kind == "duplicate" and node else None
        node[_DUP if key else "fuzz_unknown_key"] = value
        return doc, f"{kind} key {key or 'fuzz_unknown_key'!r} = {label}", raw, key
    return _set(doc, where, value), f"{shown} = {label}", raw, None


def _dump(doc: Any, syntax: str, raw: Raw | None, dup: str | None) -> bytes:
    if syntax == "yaml":
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=False)
        text = text.replace(_RAW, raw.yaml) if raw else text
    else:
        text = json.dumps(doc, indent=None if syntax == "jsonl" else 2)
        text = text.replace(json.dumps(_RAW), raw.json) if raw else text
    return (text.replace(json.dumps(_DUP) if syntax != "yaml" else _DUP, json.dumps(dup)) if dup else text).encode()


def _structure(rng: random.Random, data: bytes, syntax: str) -> tuple[bytes, str]:
    if syntax == "jsonl":
        lines = data.splitlines()
        n = rng.randrange(len(lines))
        doc, what, raw, dup = _tree_edit(rng, json.loads(lines[n]))
        lines[n] = _dump(doc, syntax, raw, dup).replace(b"\n", b" ")
        return b"\n".join(lines) + b"\n", f"line {n + 1}: {what}"
    doc = yaml.safe_load(data) if syntax == "yaml" else json.loads(data)
    doc, what, raw, dup = _tree_edit(rng, doc)
    return _dump(doc, syntax, raw, dup), what


def _setting(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A known setting of a config file (or its whole section) set to a hostile value or YAML special."""
    paths = sorted({spec[0] for spec in _FIELDS.values()})
    paths += [("hooks", event) for event in LIFECYCLE_EVENTS] + [("hooks", "timeout"), ("quality_checks", "lint")]
    path = rng.choice(paths)
    path = path[:1] if rng.random() < 0.15 else path
    doc = yaml.safe_load(data) or {}
    if len(path) == 2 and not isinstance(doc.get(path[0]), dict):
        doc[path[0]] = {}
    if rng.random() < 0.5:
        label, value = rng.choice(VALUES)
        raw = value if isinstance(value, Raw) else None
    else:
        text = rng.choice(YAML_SPECIALS)
        label, raw = (text if len(text) < 40 else f"{text[:30]}... ({len(text)} chars)"), Raw(text, text)
    _set(doc, path, _RAW if raw else value)
    return _dump(doc, "yaml", raw, None), f"{'.'.join(path)} = {label}"


# ---------------------------------------------------------------- mutations: Markdown checklists

BOXES = b"- [x]|- [X]|* [ ]|+ [ ]|1. [ ]|1) [x]|-[ ]|- []|- [  ]|- [-]|- [~]|  - [ ]|\t- [x]|> - [ ]".split(b"|")
BOXES += [b"- [ ] [ ] [x]", b"- [ ]\xc2\xa0", b"- [\xe3\x80\x80]", b"- [x]\r"]  # a no-break, an ideographic space
TITLE_PIECES = (b"\x00", b"\x1b[2J", b"\x1b]52;c;aGVsbG8=\x07", b"\xc2\x9b31m", b"\x9b", b"\xed\xa0\x80", b"\r")


def _markdown(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = data.split(b"\n")
    boxes = [n for n, line in enumerate(lines) if b"[ ]" in line] or [len(lines) - 1]
    kind = rng.choice(("checkbox", "many boxes", "hostile title", "hostile title"))
    n = rng.choice(boxes)
    if kind == "checkbox":
        variant = rng.choice(BOXES)
        lines[n] = variant + lines[n].split(b"]", 1)[-1] if b"]" in lines[n] else variant + b" " + lines[n]
        return b"\n".join(lines), f"line {n + 1} as {variant!r}"
    if kind == "many boxes":
        count = rng.choice((1000, 20_000, 200_000))
        marks = (b" ", b"x", b" ", b"X")
        many = b"".join(b"- [%s] task %d\n" % (marks[i % 4], i) for i in range(count))
        return data + b"\n" + many, f"{count} boxes appended"
    pieces = b"".join(rng.choice(TITLE_PIECES) for _ in range(rng.randint(1, 3)))
    at = rng.randint(min(len(lines[n]), 6), len(lines[n]))
    lines[n] = lines[n][:at] + pieces + lines[n][at:]
    return b"\n".join(lines), f"line {n + 1} given {pieces!r}"


# ---------------------------------------------------------------- one case


def _pick(rng: random.Random, template: Path) -> tuple[str, str, str]:
    """(the file, relative to the case's folder; its syntax; its feature): a state file of any workspace."""
    name = rng.choice(NAMES)
    target = TARGETS[name]
    if name not in STATES:
        return target.path, target.syntax, target.feature
    file = target.path.removeprefix("project/.ralph/feat/")
    feature = rng.choice([feature for feature in FEATURES if (template / f"project/.ralph/{feature}/{file}").is_file()])
    return f"project/.ralph/{feature}/{file}", target.syntax, feature


def mutate(rng: random.Random, path: Path, syntax: str) -> str:
    """Damage the file at `path` in place; what was done, in a few words."""
    data = path.read_bytes() or b"\n"
    families = ["bytes", "bytes"]
    families += ["structure", "structure"] if syntax in ("json", "jsonl", "yaml") else []
    families += ["setting", "setting"] if path.name == "config.yaml" else []
    families += ["markdown", "markdown"] if path.suffix == ".md" else []
    family = rng.choice(families)
    if family == "structure":
        data, what = _structure(rng, data, syntax)
    elif family == "setting":
        data, what = _setting(rng, data)
    elif family == "markdown":
        data, what = _markdown(rng, data)
    else:
        what = rng.choice(sorted(BYTES))
        data = BYTES[what](rng, data)
    path.write_bytes(data)
    return what


def _ledger(base: Path) -> dict[str, bytes]:
    calls = base / "home" / "calls"
    return {path.name: path.read_bytes() for path in sorted(calls.glob("*.json")) if path.is_file()}


def _refusal_shape(stderr: str) -> bool:
    """One `ralph: error:` line, after any warnings (an unknown setting's, say)."""
    *warnings, last = stderr.strip("\n").splitlines() or [""]
    return last.startswith("ralph: error: ") and all(line.startswith("ralph: warning: ") for line in warnings)


def _command(warm: WarmRalph, base: Path, args: tuple[str, ...], feature: str, what: str, findings: Findings) -> None:
    """Run one command on the damaged project and count what is wrong with how it went."""
    command, writes = " ".join(args[:2] if args[0] == "status" else args[:1]), args[0] == "run"
    before, ledger = tree(base), _ledger(base)
    argv = (args[0], "-f", feature, *args[1:])
    where = f"ralph {command} {what}"
    try:
        done = warm(base / "project", env_of(base), *argv, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        findings.add(HANG, f"{where}: no end within {TIMEOUT} s")
        return
    check_screen(findings, f"{where} (stdout)", done.stdout)
    check_screen(findings, f"{where} (stderr)", done.stderr)
    shown = f"{where}: exit {done.returncode}\n{done.stdout[-1000:]}\n{done.stderr[-1000:]}"
    if done.returncode not in (0, 1):
        findings.add(TRACEBACK, f"exit {done.returncode}: {shown}")
    # a crash is counted once, by check_screen: not again for its shape, nor for the crash log it writes
    crashed = any(mark in done.stdout + done.stderr for mark in ("Traceback (most recent call", "internal error"))
    refused = done.returncode != 0 and not (writes and "Summary:" in done.stdout)
    if refused and command != "validate" and not crashed and not _refusal_shape(done.stderr):
        findings.add(TRACEBACK, f"not a one-line error: {shown}")
    after = tree(base)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    changed = [name for name in changed if not (crashed and name == "home/errors.log")]
    if (refused or not writes) and changed:
        findings.add(CHANGED_ON_REJECT, f"{where} ({'refused' if refused else 'a view'}) changed {changed[:5]}")
    if refused and writes and _ledger(base) != ledger:
        findings.add(CHANGED_ON_REJECT, f"{where}: refused, but took a rate-limit slot")


def _state_after_run(base: Path, feature: str, target: str, what: str, findings: Findings) -> None:
    for name in ("status.json", "state.json"):
        rel = f"project/.ralph/{feature}/{name}"
        path = base / rel
        if rel == target or not path.is_file():
            continue
        data = path.read_bytes()
        try:
            ok = isinstance(json.loads(data), dict)
        except (ValueError, RecursionError):
            ok = False
        if not ok:
            findings.add(CORRUPT_STATE, f"ralph run {what}: {rel} is no JSON object: {data[:300]!r}")


def fuzz_case(warm: WarmRalph, template: Path, into: Path, seed: int, index: int, findings: Findings) -> bool:
    """One case in a new folder under `into`; whether it found anything."""
    rng = random.Random(f"{seed}/{index}")
    base = copy_case(template, into)
    target, syntax, feature = _pick(rng, template)
    what = f"on {target} after {mutate(rng, base / target, syntax)} [seed {seed} case {index}]"
    failures = findings.failures
    findings.trial("fuzz")
    for args in (*VIEWS, RUN):
        _command(warm, base, args, feature, what, findings)
    _state_after_run(base, feature, target, what, findings)
    return findings.failures > failures


def run_fuzz(count: int, seed: int, workdir: Path, findings: Findings, *, start: int = 0) -> None:
    """Run cases `start` to `start + count` of `seed` in folders under `workdir`, adding to `findings`.
    A case's folder is kept when it found something (the first few), deleted otherwise."""
    workdir.mkdir(parents=True, exist_ok=True)
    template = make_template(Path(tempfile.mkdtemp(prefix="template-", dir=workdir)))
    outputs = Path(tempfile.mkdtemp(prefix="outputs-", dir=workdir))
    warm = WarmRalph(env_of(template), outputs)
    kept = 0
    try:
        for index in range(start, start + count):
            into = Path(tempfile.mkdtemp(prefix=f"case-{seed}-{index}-", dir=workdir))
            if fuzz_case(warm, template, into, seed, index, findings) and kept < KEEP:
                kept += 1
            else:
                shutil.rmtree(into)
            for output in outputs.iterdir():
                output.unlink()
    finally:
        warm.close()
