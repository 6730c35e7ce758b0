"""The converters of config values: each takes what a YAML file, an environment variable or a flag gave
and returns the typed value, or raises ValueError saying what was expected (config/settings.py names where)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ralphloop.words.durations import MAX_SECONDS, parse_duration

# What an agent may do without asking (`permissions:`): each CLI backend maps it to its own flags.
PERMISSIONS = ("ask", "edits", "all")

# verify: a completion claim ends the loop only when the task source (and gates) agree.
# trust: the seeds' rule, a promise or EXIT_SIGNAL: true ends it at the agent's word.
COMPLETION_MODES = ("verify", "trust")
# What to do at a vendor usage limit: wait for the reset, stop (exit 2), or ask on a terminal.
USAGE_POLICIES = ("wait", "exit", "ask")
# What an `ask` nobody answered does (seed 003: exit).
NO_ANSWER_ACTIONS = ("exit", "wait")

Converter = Callable[[Any], Any]

# Bounds far past any real setting: a number beyond one is a typo or an attack, and would overflow a
# timestamp, a timer or the 64-bit integers of the records.
MAX_COUNT = 1_000_000  # iterations, calls per hour, thresholds, retries, attempts, turns
MAX_TOKENS = 10**12
MAX_USD = 1_000_000.0
MAX_MEGABYTES = 1024 * 1024  # a terabyte of log
MAX_PROGRESS_BYTES = 16 * 1024 * 1024  # of progress.txt in each prompt


def positive_int(value: Any, most: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("expected a whole number")
    text = value.strip() if isinstance(value, str) else ""
    if isinstance(value, str) and not (
        text.isascii() and text.lstrip("+-").replace("_", "").isdigit() and len(text) < 30
    ):
        raise ValueError(f"{value!r} is not a whole number")
    number = int(value)
    if number < 1:
        raise ValueError("must be 1 or more")
    if number > most:
        raise ValueError(f"must be at most {most:,}")
    return number


def token_count(value: Any) -> int:
    return positive_int(value, MAX_TOKENS)


def iterations(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().lower() in ("0", "unlimited", "none"):
        return None
    if value == 0 and not isinstance(value, bool):
        return None
    return positive_int(value)


def minutes(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 15, 90s, 15m or 1h")
    if isinstance(value, int | float):
        return parse_duration(str(value))
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a duration (use 15, 90s, 15m or 1h)") from None
    raise ValueError("expected a duration such as 15, 90s, 15m or 1h")


def idle_minutes(value: Any) -> float:
    """A duration like `minutes`, or 0 / off / none (YAML reads a bare `off` as false): no idle limit at all,
    not even the agent backend's own."""
    if value is False or (not isinstance(value, bool) and value == 0):
        return 0.0
    if isinstance(value, str) and value.strip().lower() in ("0", "off", "none"):
        return 0.0
    return minutes(value)


def seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_SECONDS:
        raise ValueError(f"expected a number of seconds, 0 or more and at most {MAX_SECONDS:.0f} (a year)")
    return float(value)


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a non-empty string")
    return value


def completion(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in COMPLETION_MODES:
        raise ValueError(f"expected one of {', '.join(COMPLETION_MODES)}")
    return value.strip().lower()


MAX_PROMISE = 200  # characters: a marker the agent prints, not a paragraph


def promise(value: Any) -> str:
    """`completion.promise`: the text that says "all done" (seed 003: `<promise>COMPLETE</promise>`). One line, so
    that it can be told apart from prose and quoted in the prompt as it is."""
    expected = 'expected the text the agent prints when all is done, such as "<promise>COMPLETE</promise>"'
    if not isinstance(value, str):
        raise ValueError(expected)
    text = value.strip()
    if not text or len(text) > MAX_PROMISE or not text.isprintable():
        raise ValueError(f"{expected} (one line of at most {MAX_PROMISE} characters)")
    return text


MAX_AGENTS = 8


def agent_names(value: Any) -> str:
    """`claude` or `claude,codex` (failover, in that order): the names, checked, joined by commas."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a non-empty string: an agent name, or several in failover order (claude,codex)")
    return ",".join(agent_list(value))


def agent_list(value: Any) -> tuple[str, ...]:
    """`[claude, codex]` (or "claude,codex"): agent names, each once, in the order given."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not value:
        raise ValueError("expected an agent name, or a list of them (claude,codex)")
    names = tuple(item.strip() if isinstance(item, str) else item for item in value)
    if not all(isinstance(name, str) and name for name in names):
        raise ValueError(f"expected agent names, got an empty or non-text one in {value!r}")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} listed twice")
    if len(names) > MAX_AGENTS:
        raise ValueError(f"at most {MAX_AGENTS} agents")
    return names


def permissions(value: Any) -> str:

    if not isinstance(value, str) or value.strip().lower() not in PERMISSIONS:
        raise ValueError(f"expected one of {', '.join(PERMISSIONS)}")
    return value.strip().lower()


def policy(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in USAGE_POLICIES:
        raise ValueError(f"expected one of {', '.join(USAGE_POLICIES)}")
    return value.strip().lower()


MERGE_RESOLVE = ("retry", "agent")


def merge_resolve(value: Any) -> str:
    """merge.resolve: what the parallel run's merge queue does at a conflict (docs/parallel.md)."""
    if not isinstance(value, str) or value.strip().lower() not in MERGE_RESOLVE:
        raise ValueError(f"expected one of {', '.join(MERGE_RESOLVE)}")
    return value.strip().lower()


def no_answer(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in NO_ANSWER_ACTIONS:
        raise ValueError(f"expected one of {', '.join(NO_ANSWER_ACTIONS)}")
    return value.strip().lower()


def money(value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip().lstrip("$"))
        except ValueError:
            raise ValueError(f"{value!r} is not an amount in USD") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_USD:
        raise ValueError(f"expected an amount in USD above 0 and at most {MAX_USD:,.0f}, such as 5 or 2.50")
    return float(value)


def fraction(value: Any) -> float:
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ValueError(f"{value!r} is not a fraction such as 0.9 or 90%") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError("expected a fraction above 0 and at most 1, such as 0.9 (or 90%)")
    return float(value)


def flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return value.strip().lower() in ("1", "true", "yes", "on")
    raise ValueError("expected true or false")


def tools(value: Any) -> tuple[str, ...]:
    """`allowed_tools` as a list, or as the CLI spells it: "Write,Bash(git *),Read". A comma inside
    parentheses belongs to the rule (`Bash(git commit -m a,b)`), not to the list."""
    if isinstance(value, str):
        items, depth, current = [], 0, ""
        for char in value:
            depth += (char == "(") - (char == ")")
            if char == "," and depth <= 0:
                items.append(current)
                current = ""
            else:
                current += char
        items.append(current)
    elif isinstance(value, list):
        if not all(isinstance(item, str) for item in value):
            raise ValueError('expected tool names, such as [Read, Write, "Bash(git *)"]')
        items = value
    else:
        raise ValueError('expected a list of tools or a string such as "Write,Bash(git *),Read"')
    tools = tuple(item.strip() for item in items if item.strip())
    if not tools:
        raise ValueError("expected at least one tool")
    return tools


def story_ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError('expected a list of story ids, such as ["1.1", "1.2", "2.1"]')
    for item in value:
        if isinstance(item, float | int) and not isinstance(item, bool):
            # YAML reads 1.10 as the number 1.1: the id as written is lost, so it must be quoted.
            raise ValueError(f'write story ids as quoted strings ("{item}"): a bare 1.10 reads as the number 1.1')
        if not isinstance(item, str) or not item.strip():
            raise ValueError('expected a list of story ids, such as ["1.1", "1.2", "2.1"]')
    ids = tuple(item.strip() for item in value)
    twice = sorted({item for item in ids if ids.count(item) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} listed twice")
    return ids


def branch_prefix(value: Any) -> str:
    if not isinstance(value, str) or any(char in value for char in " ~^:?*[\\") or ".." in value:
        raise ValueError('expected a branch-name prefix such as "feature/"')
    return value


def megabytes(value: Any) -> int:
    return positive_int(value, MAX_MEGABYTES) * 1024 * 1024


def byte_size(value: Any) -> int:
    number = positive_int(value, MAX_PROGRESS_BYTES)
    if number < 1024:
        raise ValueError("must be at least 1024")
    return number


SANDBOX_MODES = ("auto", "bwrap", "off")  # `--sandbox`, `sandbox.mode` (processes/sandbox_settings.py)
SANDBOX_NETWORKS = ("allow", "open", "none")


def sandbox_mode(value: Any) -> str:
    if isinstance(value, bool):  # YAML reads a bare `off` (and `on`) as a boolean
        return "auto" if value else "off"
    return choice(value, SANDBOX_MODES)


def sandbox_network(value: Any) -> str:
    return choice(value, SANDBOX_NETWORKS)


def choice(value: Any, choices: tuple[str, ...]) -> str:
    given = value.strip().lower() if isinstance(value, str) else value
    if given not in choices:
        from ralphloop.words.choices import nearest  # difflib, for a refusal only

        near = nearest(str(given), choices)
        hint = f" (did you mean {near}?)" if near else ""
        raise ValueError(f"expected one of {', '.join(choices)}{hint}")
    return str(given)


_HOST = r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:([0-9]{1,5}|\*))?"


def host_patterns(value: Any) -> tuple[str, ...]:
    """`sandbox.allow_hosts`: `host:port` patterns (`*.example.com:443`, `localhost:8000`, `pypi.org`: port 443)."""
    import re  # a config's own reading, never `ralph status`'s

    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
        raise ValueError("expected a list of host:port patterns, such as [pypi.org:443, '*.internal.example:8080']")
    found: list[str] = []
    for item in (item.strip().lower() for item in items if item.strip()):
        match = re.fullmatch(_HOST, item)
        port = match.group(4) if match else None
        if match is None or (port not in (None, "*") and not 0 < int(port) < 65536):
            raise ValueError(f"{item[:60]!r} is not a host:port pattern, such as pypi.org:443 or *.example.com:443")
        found.append(item if port else f"{item}:443")
    return tuple(dict.fromkeys(found))


def variable_names(value: Any) -> tuple[str, ...]:
    """`sandbox.env`: names of variables (`[MY_TOKEN, DATABASE_URL]`)."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
        raise ValueError("expected a list of variable names, such as [DATABASE_URL]")
    names = tuple(dict.fromkeys(item.strip() for item in items if item.strip()))
    bad = [name for name in names if not (name.replace("_", "a").isalnum() and not name[0].isdigit())]
    if bad:
        raise ValueError(f"{bad[0][:60]!r} is not a variable name")
    return names
