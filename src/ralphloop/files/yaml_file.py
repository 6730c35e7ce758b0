"""A YAML file read as data: its top-level mapping, size-capped, never executed (config, scripts, SPRINT.yaml)."""

from __future__ import annotations

from typing import Any

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import CONFIG_CAP, not_text, read_file, shape_problem


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 100 else text[:97] + "..."


def read_yaml_mapping(
    path: str, label: str, *, cap: int = CONFIG_CAP, follow: bool = True, cache: str | None = None
) -> dict[str, Any] | None:
    """A YAML file's top-level mapping; None when the file is absent or empty. Never executes anything.
    A string holding a NUL or a lone surrogate (YAML's "\\0", "\\uD800") is refused: no argument, variable or
    file name could carry it. `cache`: a folder where what these bytes were read as may be kept (files/yaml_cache.py),
    checked as the YAML's own reading is."""
    raw = read_file(path, label, cap=cap, follow=follow)
    if raw is None:
        return None
    if cache is not None:
        from ralphloop.files import yaml_cache

        kept = yaml_cache.found(cache, raw)
        if kept is not None and not (shape_problem(kept) or not_text(kept)):
            return kept
    data = _parsed(raw, label)
    if data is not None and cache is not None:
        yaml_cache.read_as(cache, raw, data)
    return data


def _parsed(raw: bytes, label: str) -> dict[str, Any] | None:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(raw, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise RalphError(f"{label}: invalid YAML{where}: {problem}") from None
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        # a value its tag cannot be built from (`!!float nope`, `!!timestamp x`), a number of 4,300+ digits
        raise RalphError(f"{label}: invalid YAML: a value that cannot be read ({_one_line(exc)})") from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise RalphError(f"{label}: expected a mapping of settings at the top level")
    problem = shape_problem(data) or not_text(data)
    if problem:
        raise RalphError(f"{label}: {problem}")
    return data
