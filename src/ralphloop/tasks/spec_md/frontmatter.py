"""spec.md's frontmatter: the feature, branch and created fields, each problem at its line."""

from __future__ import annotations

from collections.abc import Sequence

from ralphloop.tasks.problems import Problem

REQUIRED_FIELDS = ("feature", "branch", "created")


def read_frontmatter(lines: Sequence[str], display: str) -> tuple[dict[str, str], int, list[Problem]]:
    """The frontmatter fields as written, the index of the first body line, and the problems."""
    start = next((index for index, text in enumerate(lines) if text.strip()), None)
    if start is None or lines[start].rstrip() != "---":
        message = "no frontmatter: begin the file with '---', the feature:, branch: and created: lines, then '---'"
        return {}, 0, [Problem(display, message, (start or 0) + 1)]
    end = next((index for index in range(start + 1, len(lines)) if lines[index].rstrip() in ("---", "...")), None)
    if end is None:
        message = "the frontmatter is not closed: add a '---' line after its last field"
        return {}, start + 1, [Problem(display, message, start + 1)]
    fields, present, problems = _frontmatter_fields(lines[start + 1 : end], start + 2, display)
    if not problems or present:  # after a YAML error nothing was read: "missing" would be noise
        for key in REQUIRED_FIELDS:
            if key not in present:
                problems.append(Problem(display, f"the frontmatter has no '{key}:' field", start + 1))
    return fields, end + 1, problems


def _frontmatter_fields(
    block: Sequence[str], first_number: int, display: str
) -> tuple[dict[str, str], set[str], list[Problem]]:
    """Top-level `key: value` pairs with each value's text exactly as written, and every key present.

    The YAML is composed, not constructed: a node keeps its scalar text, so `created:
    2024-01-15T10:30:00Z` stays that string instead of becoming a datetime that prints differently.
    The resolver's tag still tells a null (`created:` with nothing after it) from text.
    """
    import yaml  # only `ralph prd` and `ralph validate` need YAML; keep it off the other commands' path

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose("\n".join(block), Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # An error at the end of the text (an unclosed quote) points past the block: name its closing line.
        line = min(first_number + mark.line, first_number + len(block)) if mark is not None else first_number - 1
        reason = getattr(exc, "problem", None) or str(exc)
        return {}, set(), [Problem(display, f"the frontmatter is not valid YAML: {reason}", line)]
    if root is None:
        return {}, set(), []
    if not isinstance(root, yaml.MappingNode):
        return {}, set(), [Problem(display, "the frontmatter must be 'key: value' lines", first_number - 1)]
    fields: dict[str, str] = {}
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = key_node.value
        line = first_number + key_node.start_mark.line
        if key in seen:
            problems.append(
                Problem(display, f"frontmatter field '{key}' is given twice (lines {seen[key]} and {line})", line)
            )
            continue
        seen[key] = line
        if not isinstance(value_node, yaml.ScalarNode):
            if key in REQUIRED_FIELDS:
                problems.append(Problem(display, f"frontmatter field '{key}' must be a single value", line))
            continue
        value = "" if value_node.tag == "tag:yaml.org,2002:null" else value_node.value.strip()
        if key in REQUIRED_FIELDS and not value:
            problems.append(Problem(display, f"frontmatter field '{key}' is empty", line))
            continue
        fields[key] = value
    return fields, set(seen), problems
