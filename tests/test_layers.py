"""The layers of the package, as docs/architecture.md draws them, checked on the source: which package may import
which, that no import (at the top, in a function or for types only) closes a cycle, and which layers do no I/O."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "ralphloop"

# The layers, top first (docs/architecture.md draws them): a module imports its own package's modules and the
# packages of lower layers, never a higher layer's nor a sibling's in its own layer. Every package is in one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli", "demo"),  # the commands; the demo (it runs `ralph` as a user would)
    ("temporal",),  # loops as durable work on a Temporal server: the workflow, a worker's activities (issue 37)
    ("start",),  # a run assembled, its preflight, the last run reconciled
    ("engine", "fleet", "monitor", "report", "web"),  # the loop, many loops, and the views of them
    ("agents", "state"),  # the backends; the readers of a run's state files
    ("tasks",),  # the task sources
    ("templates",),  # the prompt
    ("config",),  # settings and the run's policy
    ("hooks", "workspace"),  # user commands; the git workspace
    ("notify", "project", "records"),  # sinks of events; where the files live
    ("guards", "plugins"),  # pure limits; the plug-in tables
    ("analysis", "files", "processes"),  # pure reading of replies; safe file I/O; processes
    ("core", "words"),  # the shared values and seams; wording
)
LAYER_OF = {package: level for level, row in enumerate(LAYERS) for package in row}

# Pure layers: no module of theirs imports what does I/O (files, processes, sockets, the clock's sleep).
NO_IO = ("ralphloop.analysis", "ralphloop.guards", "ralphloop.engine.decide", "ralphloop.engine.judge")
IO_MODULES = ("os", "io", "subprocess", "shutil", "pathlib", "socket", "tempfile", "select", "fcntl", "time")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


@cache
def imports(name: str) -> frozenset[str]:
    """Every module `name` imports anywhere in its source: at the top, in a function, for types only."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:  # relative: resolve against this module's package
                package = name.rsplit(".", node.level)[0]
                base = f"{package}.{base}"
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return frozenset(target for target in found if target in MODULES and target != name)


def package(name: str) -> str | None:
    """The package of `name` under ralphloop ("agents" for ralphloop.agents.claude.parser); None at the root."""
    parts = name.split(".")
    if len(parts) > 2 or (MODULES[name].name == "__init__.py" and len(parts) == 2):
        return parts[1]
    return None


@cache
def reached(name: str) -> frozenset[str]:
    """The ralphloop modules `name` imports, directly or through others."""
    seen: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        for target in imports(current):
            if target in MODULES and target not in seen:
                seen.add(target)
                stack.append(target)
    return frozenset(seen)


def within(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def test_every_package_is_in_a_layer_and_nothing_is_loose() -> None:
    packages = {package(name) for name in MODULES} - {None}
    assert sorted(packages - set(LAYER_OF)) == []
    assert sorted(set(LAYER_OF) - packages) == []
    loose = sorted(name for name in MODULES if package(name) is None)
    assert loose == ["ralphloop", "ralphloop.__main__"]


@pytest.mark.parametrize("layer", [", ".join(row) for row in LAYERS])
def test_a_layer_imports_only_lower_layers(layer: str) -> None:
    broken = [
        f"{name} imports {target}"
        for name in sorted(MODULES)
        if (own := package(name)) in layer.split(", ")
        for target in sorted(imports(name))
        if (theirs := package(target)) is not None and theirs != own and LAYER_OF[theirs] <= LAYER_OF[own]
    ]
    assert broken == []


def test_no_import_cycle_anywhere() -> None:
    """No module reaches itself through its imports, type-only and function-local ones included."""
    cycles = sorted(name for name in MODULES if name in reached(name))
    assert cycles == []


def test_no_module_is_named_after_a_standard_library_module() -> None:
    clashes = sorted(name for name in MODULES if name.rsplit(".", 1)[-1] in sys.stdlib_module_names)
    assert clashes == []


@pytest.mark.parametrize("layer", NO_IO)
def test_pure_layers_import_nothing_that_does_io(layer: str) -> None:
    broken = [
        f"{name} imports {target}"
        for name in sorted(MODULES)
        if within(name, layer)
        for target in sorted(imports(name))
        if target.split(".")[0] in IO_MODULES
    ]
    assert broken == []


def test_no_source_module_is_over_400_lines() -> None:
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > 400}
    assert long == {}


def test_the_engine_is_under_1400_lines() -> None:
    total = sum(
        len(path.read_text().splitlines()) for name, path in MODULES.items() if within(name, "ralphloop.engine")
    )
    assert total < 1400


def test_claude_specifics_stay_under_the_claude_backend() -> None:
    """Event parsing, usage-limit events, token kinds, activity lines: only agents/ imports agents/claude/."""
    broken = [
        f"{name} imports {target}"
        for name in sorted(MODULES)
        if not within(name, "ralphloop.agents")
        for target in sorted(imports(name))
        if within(target, "ralphloop.agents.claude")
    ]
    assert broken == []
